import { describe, expect, it } from "vitest";
import { headAndTail, splitToFit } from "./fit-text";

const count = (text: string) => Math.ceil(text.length / 4);
const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe("splitToFit", () => {
  it("cuts at sentence ends into pieces that fit, losing no word", () => {
    const text = Array.from({ length: 200 }, (_, i) => `Satz Nummer ${i} ist hier.`).join(" ");
    const pieces = splitToFit(text, 100, count);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.every((p) => count(p) <= 100)).toBe(true);
    expect(pieces.every((p) => p.endsWith("."))).toBe(true);
    expect(words(pieces.join(" "))).toEqual(words(text));
  });

  it("falls back to words, then characters, for text without punctuation or spaces", () => {
    const noPunctuation = Array.from({ length: 500 }, (_, i) => `wort${i}`).join(" ");
    const pieces = splitToFit(noPunctuation, 50, count);
    expect(pieces.every((p) => count(p) <= 50)).toBe(true);
    expect(words(pieces.join(" "))).toEqual(words(noPunctuation));
    const blob = "x".repeat(1000);
    const chars = splitToFit(blob, 30, count);
    expect(chars.every((p) => count(p) <= 30)).toBe(true);
    expect(chars.join("")).toBe(blob);
  });
});

describe("headAndTail", () => {
  it("keeps the start and the end within the budget, marking the gap", () => {
    const text = `START ${"mitte ".repeat(2000)}ENDE`;
    const cut = headAndTail(text, 200, count, "[…]");
    expect(count(cut)).toBeLessThanOrEqual(200);
    expect(cut.startsWith("START")).toBe(true);
    expect(cut.endsWith("ENDE")).toBe(true);
    expect(cut).toContain("\n[…]\n");
    expect(headAndTail("kurz", 200, count, "[…]")).toBe("kurz");
    expect(headAndTail(text, 5, count, "[…]")).toBe("");
  });
});
