import { describe, expect, it } from "vitest";
import { splitSentences } from "./sentences";

const texts = (text: string) => splitSentences(text).map((s) => s.text);

describe("splitSentences", () => {
  it("keeps German abbreviations, decimals, dates and ordinals inside their sentence", () => {
    expect(
      texts("Z.n. PCI am 4. November 2025. V.a. KHK, z.B. bei Belastung. Kreatinin 1,3 mg/dl am 12.03.2026."),
    ).toEqual(["Z.n. PCI am 4. November 2025.", "V.a. KHK, z.B. bei Belastung.", "Kreatinin 1,3 mg/dl am 12.03.2026."]);
    expect(texts("Überweisung durch Dr. Weber. Kontrolle in 2 Wochen.")).toEqual([
      "Überweisung durch Dr. Weber.",
      "Kontrolle in 2 Wochen.",
    ]);
  });

  it("splits list items at semicolons and lines, dropping bullets", () => {
    expect(texts("ASS 100 mg 1-0-0; Ticagrelor 90 mg 1-0-1\n• Cardiovascular: No murmurs.")).toEqual([
      "ASS 100 mg 1-0-0;",
      "Ticagrelor 90 mg 1-0-1",
      "Cardiovascular: No murmurs.",
    ]);
  });

  it("keeps offsets into the text", () => {
    const text = "Erster Satz. Zweiter Satz.";
    for (const s of splitSentences(text)) expect(text.slice(s.start, s.end)).toBe(s.text);
  });
});
