import { describe, expect, it } from "vitest";
import { GERMAN_LETTER_HEAD } from "../../../tests/support/export-letter";
import type { ExportLetter } from "./export-letter";
import { cleanExportText, writeLetterText } from "./letter-text";

function letter(overrides: Partial<ExportLetter> = {}): ExportLetter {
  return {
    ...GERMAN_LETTER_HEAD,
    letterhead: {
      practiceName: "Hausarztpraxis am Markt",
      doctors: ["Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin"],
      street: "Marktstraße 1",
      postalCode: "12345",
      city: "Musterstadt",
      phone: "0123 45678",
      email: "praxis@example.org",
      bsnr: null,
      lanr: null,
      logo: null,
      closing: "Mit freundlichen Grüßen",
      signature: ["Dr. med. Anna Weber"],
    },
    sections: [
      { title: "Anamnese", text: "Seit drei Tagen Schmerzen in der Brust.\nKein Fieber." },
      { title: "Befund", text: "RR 158/94 mmHg, Puls 80/min." },
      { title: "Procedere", text: "Wiedervorstellung in zwei Wochen." },
    ],
    ...overrides,
  };
}

describe("writeLetterText", () => {
  it("puts each title on its own line, its text below and one blank line between sections", () => {
    expect(writeLetterText(letter())).toBe(
      "Anamnese\nSeit drei Tagen Schmerzen in der Brust.\nKein Fieber.\n\n" +
        "Befund\nRR 158/94 mmHg, Puls 80/min.\n\n" +
        "Procedere\nWiedervorstellung in zwei Wochen.\n",
    );
  });

  it("adds the patient line, date and subject only when asked", () => {
    const text = writeLetterText(letter(), { header: true });
    expect(text.split("\n").slice(0, 5)).toEqual([
      "Patient/in: Jürgen Weiß, geb. 01.02.1950",
      "Datum: 27.11.2026",
      "Befundbericht vom 27.11.2026",
      "",
      "Anamnese",
    ]);
    expect(writeLetterText(letter())).not.toContain("Jürgen");
  });

  it("writes the header in the letter's language and leaves out a missing birth date", () => {
    const english = letter({
      language: "en-GB",
      patient: { name: "Jane Doe", birthDate: null },
      labels: { ...letter().labels, patient: "Patient", born: "born", date: "Date" },
    });
    expect(writeLetterText(english, { header: true }).split("\n").slice(0, 2)).toEqual([
      "Patient: Jane Doe",
      "Date: 27/11/2026",
    ]);
  });

  it("uses LF by default and CRLF everywhere when asked, never a lone CR", () => {
    const lf = writeLetterText(letter({ sections: [{ title: "A", text: "eins\r\nzwei\rdrei" }] }));
    expect(lf).toBe("A\neins\nzwei\ndrei\n");
    const crlf = writeLetterText(letter(), { header: true, lineEnding: "crlf" });
    expect(crlf).toContain("Anamnese\r\nSeit drei Tagen");
    expect(crlf.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
  });

  it("leaves no trailing whitespace, no tabs and no runs of blank lines", () => {
    const text = writeLetterText(
      letter({
        sections: [
          { title: "  Befund \t", text: "\n\nZeile 1   \n\tZeile 2\t\n\n\n\nZeile 3  \n\n" },
          { title: "Plan", text: "Kontrolle. " },
        ],
      }),
    );
    expect(text).toBe("Befund\nZeile 1\n Zeile 2\n\nZeile 3\n\nPlan\nKontrolle.\n");
    for (const line of text.split("\n")) expect(line).not.toMatch(/\s$/);
  });

  it("turns non-breaking and typographic spaces into spaces and drops zero-width characters", () => {
    const text = writeLetterText(
      letter({
        sections: [
          {
            title: "Medi\u00ADkation",
            text: "Ramipril\u00A05\u202Fmg 1-0-0\u200B\nDr.\u2009med.\uFEFF Weber\u2060 rät\u200D ab\u0007",
          },
        ],
      }),
    );
    expect(text).toBe("Medikation\nRamipril 5 mg 1-0-0\nDr. med. Weber rät ab\n");
    // eslint-disable-next-line no-control-regex -- the test looks for control characters
    expect(text).not.toMatch(/[\u00A0\u00AD\u200B-\u200F\u202F\u2060\uFEFF\u0000-\u0009\u000B-\u001F]/);
  });

  it("composes umlauts (NFC), so a PVS with a legacy code page gets one character per umlaut", () => {
    const decomposed = "Mu\u0308ller, Gro\u0308ße, Fu\u00DF";
    const text = writeLetterText(letter({ sections: [{ title: "Hinweis", text: decomposed }] }));
    expect(text).toBe("Hinweis\nMüller, Größe, Fuß\n");
    expect(text).toContain("\u00FC");
  });

  it("introduces no markup: no bullets, no underlines, no HTML; the doctor's own text stays as written", () => {
    const text = writeLetterText(
      letter({ sections: [{ title: "Diagnosen", text: "- Hypertonie\n- Diabetes <Typ 2> & Adipositas" }] }),
      { header: true },
    );
    expect(text).toContain("Diagnosen\n- Hypertonie\n- Diabetes <Typ 2> & Adipositas\n");
    expect(text).not.toMatch(/^(#|\*|=+$|-{3,}$)/m);
    expect(text).not.toMatch(/&(amp|lt|gt);|<\/?(p|br|b|div)>/);
  });

  it("leaves out sections without text and writes a section without a title as its text", () => {
    const text = writeLetterText(
      letter({
        sections: [
          { title: "Leer", text: " \n\u200B\n" },
          { title: "", text: "Ohne Überschrift." },
          { title: "Befund", text: "Unauffällig." },
        ],
      }),
    );
    expect(text).toBe("Ohne Überschrift.\n\nBefund\nUnauffällig.\n");
  });

  it("keeps a title on one line even if it held a line break", () => {
    expect(writeLetterText(letter({ sections: [{ title: "Befund\nund Verlauf", text: "Gut." }] }))).toBe(
      "Befund und Verlauf\nGut.\n",
    );
  });

  it("is empty for a letter without content", () => {
    expect(writeLetterText(letter({ sections: [] }))).toBe("");
  });
});

describe("cleanExportText", () => {
  it("keeps non-breaking spaces and line breaks but removes what XML forbids", () => {
    expect(cleanExportText("a\u00A0b\r\nc\u0000d\uD800e")).toBe("a\u00A0b\ncd\uFFFDe");
  });
});
