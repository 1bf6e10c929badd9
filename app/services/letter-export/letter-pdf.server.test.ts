import { describe, expect, it } from "vitest";
import { GERMAN_LETTER_HEAD } from "../../../tests/support/export-letter";
import type { ExportLetter } from "./export-letter";
import { DIN_5008_B, writeLetterPdf } from "./letter-pdf.server";

// The PDF is read back with pdf.js (the reader the app uses for uploaded PDFs), not with the library that wrote it:
// positions, text and fonts are what a viewer sees.

const PT_PER_MM = 72 / 25.4;

type Item = { text: string; x: number; top: number; baseline: number; right: number; size: number; font: string };
type Page = { width: number; height: number; items: Item[]; fonts: FontInfo[]; images: number };
type FontInfo = { name: string; embedded: boolean; bytes: number };

type PdfjsFont = { name?: string; missingFile?: boolean; data?: Uint8Array };

async function loadPdfjs() {
  // As app/services/pdf/text.server.ts: the worker module first, so pdf.js runs its parser in-process.
  await import("pdfjs-dist/legacy/build/pdf.worker.mjs" as string);
  return import("pdfjs-dist/legacy/build/pdf.mjs");
}

/** Every page's size in pt and its text items in mm from the top-left corner, with the fonts they use. */
async function readPdf(bytes: Uint8Array): Promise<Page[]> {
  const pdfjs = await loadPdfjs();
  const doc = await pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    fontExtraProperties: true,
    verbosity: 0,
  }).promise;
  const pages: Page[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const page = await doc.getPage(n);
    const [, , width, height] = page.view;
    const operators = await page.getOperatorList();
    const content = await page.getTextContent();
    const items: Item[] = [];
    for (const raw of content.items) {
      if (!("str" in raw) || raw.str.trim() === "") continue;
      const [, , , d, e, f] = raw.transform as number[];
      const baseline = (height - f) / PT_PER_MM;
      items.push({
        text: raw.str,
        x: e / PT_PER_MM,
        right: (e + raw.width) / PT_PER_MM,
        baseline,
        top: baseline - (d * 0.75) / PT_PER_MM, // Arimo's capitals rise about 0.72 em
        size: d,
        font: raw.fontName,
      });
    }
    const fonts = [...new Set(items.map((i) => i.font))].map((id) => {
      const font = page.commonObjs.get(id) as PdfjsFont;
      return { name: font.name ?? "", embedded: font.missingFile === false, bytes: font.data?.byteLength ?? 0 };
    });
    const images = operators.fnArray.filter((fn) => fn === pdfjs.OPS.paintImageXObject).length;
    pages.push({ width, height, items, fonts, images });
  }
  await doc.destroy();
  return pages;
}

/** The text of all pages in reading order (page, then top to bottom, then left to right), one string per line. */
function lines(pages: Page[], only: (page: Page) => Item[] = (page) => page.items): string[] {
  return pages.flatMap((page) => {
    const rows = new Map<number, Item[]>();
    for (const item of only(page)) {
      const key = Math.round(item.baseline * 2) / 2;
      rows.set(key, [...(rows.get(key) ?? []), item]);
    }
    return [...rows.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, row]) =>
        row
          .sort((a, b) => a.x - b.x)
          .map((i) => i.text)
          .join(" "),
      );
  });
}

function find(pages: Page[], text: string): Item & { page: number } {
  for (const [page, { items }] of pages.entries()) {
    const item = items.find((i) => i.text === text);
    if (item) return { ...item, page };
  }
  throw new Error(`not in the PDF: ${text}`);
}

/** The body's items: below the follow-page header and above the page number. */
function bodyItems(page: Page): Item[] {
  return page.items.filter((i) => i.top > DIN_5008_B.followHeader + 5 && i.top < DIN_5008_B.pageNumber - 2);
}

// A 2 × 1 pixel PNG.
const PNG = Uint8Array.from(
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAADklEQVR4nGP4z8AAQv8BD/kD/YURmXYAAAAASUVORK5CYII=",
    "base64",
  ),
);

/** A 4 × 4 RGBA PNG whose IDAT is not zlib data (CRCs are not checked by readers, so left 0). */
function brokenRgbaPng(): Uint8Array {
  const chunk = (type: string, body: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(body.length);
    return Buffer.concat([length, Buffer.from(type, "latin1"), body, Buffer.alloc(4)]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(4, 0);
  ihdr.writeUInt32BE(4, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return new Uint8Array(
    Buffer.concat([
      PNG.subarray(0, 8),
      chunk("IHDR", ihdr),
      chunk("IDAT", Buffer.from("garbage-not-zlib")),
      chunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

function letter(overrides: Partial<ExportLetter> = {}): ExportLetter {
  return {
    ...GERMAN_LETTER_HEAD,
    letterhead: {
      practiceName: "Hausarztpraxis Größe & Söhne",
      doctors: [
        "Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin",
        "Dr. med. Jörg Maaß, Facharzt für Innere Medizin",
      ],
      street: "Marktstraße 1",
      postalCode: "12345",
      city: "Musterstadt",
      phone: "0123 45678",
      email: "praxis@example.org",
      bsnr: "123456789",
      lanr: "987654321",
      logo: null,
      closing: "Mit freundlichen Grüßen",
      signature: ["Dr. med. Anna Weber", "Fachärztin für Allgemeinmedizin"],
    },
    sections: [
      { title: "Anamnese", text: "Seit drei Tagen Schmerzen in der Brust.\nKein Fieber, keine Übelkeit." },
      { title: "Befund", text: "RR 160/95 mmHg, Puls 80/min, „unauffällig“ – ÄÖÜ äöü ß, Zuzahlung 10 €." },
      { title: "Hinweis", text: "<script>alert(1)</script>" },
      { title: "Procedere", text: "Wiedervorstellung in zwei Wochen; Maßnahmen besprochen." },
    ],
    ...overrides,
  };
}

const SENTENCE =
  "Die Beschwerden bestehen seit drei Wochen, nehmen unter Belastung zu und bessern sich in Ruhe binnen Minuten.";

/** Ten sections of `sentences` sentences each; with 6, the writer needs three pages. */
function longLetter(sentences = 6, first = sentences): ExportLetter {
  return letter({
    sections: Array.from({ length: 10 }, (_, i) => ({
      title: `Abschnitt ${i + 1}: Überschrift`,
      text: Array.from({ length: i === 0 ? first : sentences }, (_, j) => `${SENTENCE} (${i + 1}.${j + 1})`).join(" "),
    })),
  });
}

describe("writeLetterPdf", () => {
  it("writes A4 pages with the recipient inside the DIN 5008 Anschriftzone and the parts in order", async () => {
    const pages = await readPdf(await writeLetterPdf(letter()));
    expect(pages).toHaveLength(1);
    expect(pages[0].width).toBeCloseTo(595.28, 0);
    expect(pages[0].height).toBeCloseTo(841.89, 0);

    const zone = DIN_5008_B.recipientZone;
    for (const text of ["Herrn Dr. med. Peter Braun", "Lindenweg 2", "12345 Musterstadt"]) {
      const item = find(pages, text);
      expect(item.x, text).toBeGreaterThanOrEqual(zone.x + 4.5); // 5 mm inside the field
      expect(item.right, text).toBeLessThanOrEqual(zone.x + zone.width);
      expect(item.top, text).toBeGreaterThanOrEqual(zone.y);
      expect(item.baseline, text).toBeLessThanOrEqual(zone.y + zone.height);
    }
    // The return line sits in the Zusatz- und Vermerkzone above, in one line.
    const back = pages[0].items.find((i) => i.text.startsWith("Hausarztpraxis Größe & Söhne · Marktstraße 1"))!;
    expect(back.baseline).toBeGreaterThan(DIN_5008_B.address.y);
    expect(back.baseline).toBeLessThan(zone.y);
    expect(back.right).toBeLessThanOrEqual(zone.x + zone.width);

    // The information block sits right of the address field, the date last.
    const date = find(pages, "27.11.2026");
    const born = find(pages, "01.02.1950");
    expect(date.x).toBeGreaterThanOrEqual(DIN_5008_B.info.x);
    expect(date.top).toBeGreaterThan(born.top);
    expect(find(pages, "Jürgen Weiß").top).toBeGreaterThanOrEqual(DIN_5008_B.info.y);

    // Reading order by position: the page, then top to bottom.
    const order = [
      "Hausarztpraxis Größe & Söhne",
      "Dr. med. Jörg Maaß, Facharzt für Innere Medizin",
      "Herrn Dr. med. Peter Braun",
      "12345 Musterstadt",
      "Befundbericht vom 27.11.2026",
      "Anamnese",
      "Kein Fieber, keine Übelkeit.",
      "Befund",
      "Hinweis",
      "Procedere",
      "Mit freundlichen Grüßen",
      "Fachärztin für Allgemeinmedizin",
      "Seite 1 von 1",
    ].map((text) => {
      const item = find(pages, text);
      return item.page * 1000 + item.baseline;
    });
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // The subject starts where form B puts it, two lines below the address field; it and the titles are bold.
    expect(find(pages, "Befundbericht vom 27.11.2026").top).toBeGreaterThanOrEqual(DIN_5008_B.bodyTop - 0.5);
    expect(find(pages, "Befundbericht vom 27.11.2026").font).toBe(find(pages, "Anamnese").font);
    expect(find(pages, "Anamnese").font).not.toBe(find(pages, "Kein Fieber, keine Übelkeit.").font);
  });

  it("keeps umlauts, ß, quotes, dashes and the euro sign, and the markup as text", async () => {
    const text = lines(await readPdf(await writeLetterPdf(letter()))).join("\n");
    expect(text).toContain("Hausarztpraxis Größe & Söhne");
    expect(text).toContain("Jürgen Weiß");
    expect(text).toContain("RR 160/95 mmHg, Puls 80/min, „unauffällig“ – ÄÖÜ äöü ß, Zuzahlung 10 €.");
    expect(text).toContain("<script>alert(1)</script>");
    expect(text).toContain("Mit freundlichen Grüßen");
  });

  it("embeds its fonts (Arimo) and uses none of the standard 14", async () => {
    const bytes = await writeLetterPdf(letter());
    const pages = await readPdf(bytes);
    const fonts = pages.flatMap((p) => p.fonts);
    expect(fonts.length).toBeGreaterThanOrEqual(2); // regular and bold
    for (const font of fonts) {
      expect(font.name).toMatch(/Arimo/);
      expect(font.embedded).toBe(true);
      expect(font.bytes).toBeGreaterThan(1000);
    }
    const raw = Buffer.from(bytes).toString("latin1");
    expect(raw).toContain("/FontFile2");
    expect(raw).not.toMatch(/\/BaseFont \/(Helvetica|Times|Courier)/);
  });

  it("sets a long letter on three pages, each with 'Seite n von 3', no section missing and the right margin kept", async () => {
    const source = longLetter();
    const pages = await readPdf(await writeLetterPdf(source));
    expect(pages).toHaveLength(3);
    for (const [i, page] of pages.entries()) {
      expect(page.width).toBeCloseTo(595.28, 0);
      expect(page.height).toBeCloseTo(841.89, 0);
      const number = page.items.filter((item) => item.text === `Seite ${i + 1} von 3`);
      expect(number, `page ${i + 1}`).toHaveLength(1);
      expect(number[0].top).toBeGreaterThan(270);
      for (const item of bodyItems(page)) {
        expect(item.right, item.text).toBeLessThanOrEqual(DIN_5008_B.page.width - DIN_5008_B.margin.right + 0.1);
        expect(item.baseline, item.text).toBeLessThanOrEqual(DIN_5008_B.page.height - DIN_5008_B.margin.bottom);
      }
    }
    // Following pages say whose letter they are.
    expect(pages[1].items.some((i) => i.text.includes("Jürgen Weiß") && i.top < 20)).toBe(true);

    const text = lines(pages, bodyItems);
    const joined = text.join(" ");
    let last = -1;
    for (const section of source.sections) {
      const title = text.indexOf(section.title);
      expect(title, section.title).toBeGreaterThan(last);
      last = title;
      expect(joined).toContain(section.text);
    }
    expect(text.indexOf("Mit freundlichen Grüßen")).toBeGreaterThan(last);
  });

  it("never leaves a section title as the last line of a page", async () => {
    const titles = new Set(longLetter().sections.map((s) => s.title));
    let pushed = 0;
    // The first section grows a sentence at a time, so every title passes every page foot once.
    for (let first = 1; first <= 9; first++) {
      const pages = await readPdf(await writeLetterPdf(longLetter(5, first)));
      for (const page of pages.slice(0, -1)) {
        const body = bodyItems(page).sort((a, b) => a.baseline - b.baseline);
        const foot = body.at(-1)!;
        expect(titles.has(foot.text), `${first}: ${foot.text}`).toBe(false);
        expect(titles.has(body.at(-2)!.text), `${first}: ${body.at(-2)!.text}`).toBe(false);
        const limit = DIN_5008_B.page.height - DIN_5008_B.margin.bottom;
        if (foot.baseline < limit - 3 * (14 / PT_PER_MM)) pushed++;
      }
    }
    expect(pushed).toBeGreaterThan(0); // the rule did move titles to the next page
  });

  it("keeps the closing with the signature under it", async () => {
    const moved = new Set<number>();
    // One more line each time, so the closing passes page 1's foot.
    for (let count = 22; count <= 34; count++) {
      const text = Array.from({ length: count }, (_, i) => `Zeile ${i + 1} des Befunds.`).join("\n");
      const pages = await readPdf(await writeLetterPdf(letter({ sections: [{ title: "Befund", text }] })));
      const closing = find(pages, "Mit freundlichen Grüßen");
      expect(closing.page, `${count}`).toBe(find(pages, "Fachärztin für Allgemeinmedizin").page);
      moved.add(closing.page);
    }
    expect([...moved].sort()).toEqual([0, 1]);
  });

  it("keeps a value with its unit on one line", async () => {
    // The value sits a little further along each line, so without the rule some line would end before its unit.
    const sections = Array.from({ length: 30 }, (_, i) => ({
      title: `Messung ${i + 1}`,
      text: `${"Blutdruck gemessen, ".repeat(3)}${"x".repeat(i)} RR 148/92 mmHg.`,
    }));
    const text = lines(await readPdf(await writeLetterPdf(letter({ sections }))), bodyItems);
    expect(text.filter((l) => l.includes("mmHg"))).toHaveLength(30);
    for (const l of text) {
      expect(l).not.toMatch(/148\/92$/);
      expect(l).not.toMatch(/^mmHg/);
    }
  });

  it("breaks words longer than a line instead of cutting them off, and survives odd text", async () => {
    const word = "Ösophagogastroduodenoskopie".repeat(12);
    const path = `/${"sehr-lange-pfadangabe/".repeat(20)}befund.pdf`;
    const pages = await readPdf(
      await writeLetterPdf(
        letter({
          subject: `${word}\u0000\u0007\u200b`,
          recipient: {
            name: `Herrn ${"Professor ".repeat(12)}Doktor`,
            addressLines: ["Zeile 1", "Zeile 2", "Zeile 3", "Zeile 4", "Zeile 5", "Zeile 6", "Zeile 7"],
          },
          sections: [
            { title: "Lang", text: `${word} und ${path}` },
            { title: "Leer", text: "   \n\n  " },
            { title: "Zeichen", text: "Tab\there, 😀 emoji, \uFFFF, \u202Ebidi, 中文 and control\u0001." },
          ],
        }),
      ),
    );
    const body = pages.flatMap(bodyItems);
    const limit = DIN_5008_B.page.width - DIN_5008_B.margin.right + 0.1;
    for (const item of body) expect(item.right, item.text).toBeLessThanOrEqual(limit);
    const text = lines(pages);
    // The pieces of the long word are consecutive lines that add up to the word.
    const start = text.findIndex((l) => l.startsWith("Ösophagogastro"));
    const pieces: string[] = [];
    for (let i = start; pieces.join("").length < word.length; i++) pieces.push(text[i]);
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.join("")).toBe(word);
    // A path breaks after its slashes.
    expect(text.join("").replace(/\s/g, "")).toContain(`${word}und${path}`);
    // A section with only blank text is left out.
    expect(text).not.toContain("Leer");
    expect(text.some((l) => l.includes("Zeichen"))).toBe(true);
    // Every recipient line that is drawn stays inside the Anschriftzone.
    const zone = DIN_5008_B.recipientZone;
    const recipient = pages[0].items.filter((i) => i.x < 100 && i.top > zone.y - 1 && i.top < DIN_5008_B.bodyTop - 2);
    expect(recipient.length).toBeGreaterThanOrEqual(9);
    for (const item of recipient) {
      expect(item.top, item.text).toBeGreaterThanOrEqual(zone.y);
      expect(item.baseline, item.text).toBeLessThanOrEqual(zone.y + zone.height);
      expect(item.right, item.text).toBeLessThanOrEqual(zone.x + zone.width);
    }
  });

  it("writes a letter without sections, and a letterhead with many doctors stays above the address field", async () => {
    const doctors = Array.from(
      { length: 14 },
      (_, i) => `Dr. med. Ärztin Nummer ${i + 1}, Fachärztin für Innere Medizin`,
    );
    const source = letter({ sections: [], letterhead: { ...letter().letterhead, doctors } });
    const pages = await readPdf(await writeLetterPdf(source));
    expect(pages).toHaveLength(1);
    const text = lines(pages);
    expect(text).toContain("Befundbericht vom 27.11.2026");
    expect(text).toContain("Mit freundlichen Grüßen");
    expect(text).toContain("Seite 1 von 1");
    const head = pages[0].items.filter((i) => i.text.includes("Ärztin Nummer"));
    expect(head.length).toBeGreaterThan(0);
    for (const item of head) expect(item.baseline).toBeLessThan(DIN_5008_B.address.y);
    expect(head.map((i) => i.text).join(" ")).toContain("Nummer 14,");
  });

  it("draws a PNG logo, and leaves out an SVG or a broken PNG without failing", async () => {
    const withPng = await readPdf(
      await writeLetterPdf(letter({ letterhead: { ...letter().letterhead, logo: { mime: "image/png", data: PNG } } })),
    );
    expect(withPng[0].images).toBe(1);
    // The letterhead's text keeps clear of the logo at the right edge (at most 50 mm wide).
    const name = find(withPng, "Hausarztpraxis Größe & Söhne");
    expect(name.right).toBeLessThanOrEqual(DIN_5008_B.letterhead.x + DIN_5008_B.letterhead.width - 50);

    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="5"/></svg>');
    for (const logo of [
      { mime: "image/svg+xml" as const, data: svg },
      { mime: "image/png" as const, data: PNG.slice(0, 30) },
      { mime: "image/png" as const, data: new Uint8Array([1, 2, 3]) },
      // Transparency, and image data that is no zlib stream: pdfkit would fail on it after the PDF was begun.
      { mime: "image/png" as const, data: brokenRgbaPng() },
    ]) {
      const pages = await readPdf(await writeLetterPdf(letter({ letterhead: { ...letter().letterhead, logo } })));
      expect(pages[0].images).toBe(0);
      expect(lines(pages)).toContain("Hausarztpraxis Größe & Söhne");
    }
  });

  it("writes the English labels and date format it is given", async () => {
    const pages = await readPdf(
      await writeLetterPdf(
        letter({
          language: "en-GB",
          subject: "Clinic letter",
          patient: { name: "John Smith", birthDate: "1950-02-01" },
          letterhead: { ...letter().letterhead, closing: "Kind regards" },
          labels: {
            page: (page, pages) => `Page ${page} of ${pages}`,
            patient: "Patient",
            born: "Born",
            date: "Date",
            phone: "Phone",
            email: "Email",
            bsnr: "BSNR",
            lanr: "LANR",
          },
        }),
      ),
    );
    const text = lines(pages);
    expect(text).toContain("Page 1 of 1");
    expect(text.some((l) => l.startsWith("Born") && l.includes("01/02/1950"))).toBe(true);
    expect(text.some((l) => l.startsWith("Date") && l.includes("27/11/2026"))).toBe(true);
    expect(text).toContain("Kind regards");
    expect(text.join("\n")).not.toMatch(/Seite|geb\.|Datum/);
  });
});
