import { describe, expect, it } from "vitest";
import { LetterGenerationError } from "./letter-errors";
import { NOTE_MAX_CHARS } from "./letter-prompt";
import {
  buildNotesSchema,
  headAndTail,
  mergeNotes,
  notesBlock,
  notesPerSection,
  packTranscript,
  readNotesAnswer,
  splitToFit,
  trimNotesToFit,
  type TranscriptUnit,
} from "./long-transcript";

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

describe("packTranscript", () => {
  const unit = (turn: number, text: string): TranscriptUnit => ({
    turn,
    speakerNumber: (turn % 2) + 1,
    text,
    tokens: 10,
  });

  it("prefers a turn boundary when it keeps most of the part", () => {
    const units = [unit(0, "a"), unit(0, "b"), unit(0, "c"), unit(0, "d"), unit(1, "e"), unit(1, "f")];
    // capacity 60, label 2: turn 0 costs 42, turn 1 would overflow in its second sentence.
    const parts = packTranscript(units, 60, 2);
    expect(parts.map((p) => p.map((u) => u.text).join(""))).toEqual(["abcd", "ef"]);
  });

  it("cuts between sentences when the only boundary is too early", () => {
    const units = [unit(0, "a"), unit(1, "b"), unit(1, "c"), unit(1, "d"), unit(1, "e"), unit(1, "f"), unit(1, "g")];
    const parts = packTranscript(units, 60, 2);
    expect(parts.map((p) => p.map((u) => u.text).join(""))).toEqual(["abcde", "fg"]);
    expect(parts.flat()).toEqual(units);
  });
});

describe("notes", () => {
  it("has a strict schema with bounded lists", () => {
    const schema = buildNotesSchema(2, 3, true);
    expect(schema.required).toEqual(["document_type", "notes"]);
    expect(schema.additionalProperties).toBe(false);
    const notes = schema.properties!.notes!;
    expect(notes.required).toEqual(["s1", "s2"]);
    expect(notes.additionalProperties).toBe(false);
    expect(notes.properties!.s1).toMatchObject({ type: "array", maxItems: 3, items: { type: "string" } });
    expect(buildNotesSchema(2, 3, false).required).toEqual(["notes"]);
  });

  it("sizes notes per section by the answer budget, at least one", () => {
    expect(notesPerSection(5, 1000)).toBe(2);
    expect(notesPerSection(10, 300)).toBe(1);
    expect(notesPerSection(1, 100_000)).toBe(12);
  });

  it("reads answers strictly but cuts lists and notes to their bounds", () => {
    const long = "y".repeat(NOTE_MAX_CHARS + 50);
    const read = readNotesAnswer(
      { document_type: "other", notes: { s1: ["a", " ", "b", "c"], s2: [long] } },
      2,
      2,
      true,
    );
    expect(read.documentType).toBe("other");
    expect(read.notes[0]).toEqual(["a", "b"]);
    expect(read.notes[1]![0]!.length).toBe(NOTE_MAX_CHARS);
    for (const bad of [
      { notes: { s1: [], s2: [] } },
      { document_type: "other", notes: { s1: [] } },
      { document_type: "other", notes: { s1: [], s2: [], s3: [] } },
      { document_type: "other", notes: { s1: [1], s2: [] } },
      { document_type: "other", notes: { s1: [], s2: [] }, extra: true },
    ]) {
      expect(() => readNotesAnswer(bad, 2, 2, true)).toThrow(LetterGenerationError);
    }
  });

  it("merges in order without repeats, and trims round-robin when nothing else helps", () => {
    const merged = mergeNotes(
      [
        [["Ramipril 5 mg"], []],
        [["ramipril  5 mg", "Apixaban 5 mg"], ["Penicillin"]],
      ],
      2,
    );
    expect(merged).toEqual([["Ramipril 5 mg", "Apixaban 5 mg"], ["Penicillin"]]);
    const titles = ["Medikation", "Allergien"];
    const many = [Array.from({ length: 20 }, (_, i) => `Medikament ${i}`), ["Penicillin", "Latex"]];
    const budget = count(notesBlock([many[0]!.slice(0, 4), ["Penicillin"]], titles));
    const trimmed = trimNotesToFit(many, titles, budget, count);
    expect(count(notesBlock(trimmed, titles))).toBeLessThanOrEqual(budget);
    // Every section keeps its first notes; the long list gives way.
    expect(trimmed[1]).toEqual(["Penicillin", "Latex"]);
    expect(trimmed[0]!.length).toBeGreaterThan(1);
    expect(trimmed[0]!.length).toBeLessThan(20);
    expect(trimmed[0]).toEqual(many[0]!.slice(0, trimmed[0]!.length));
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
