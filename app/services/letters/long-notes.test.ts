import { describe, expect, it } from "vitest";
import { LetterGenerationError } from "./letter-errors";
import { NOTE_MAX_CHARS } from "./letter-prompt";
import { buildNotesSchema, mergeNotes, notesBlock, readNotesAnswer, trimNotesToFit } from "./long-notes";
import { notesPerSection } from "./long-transcript";

const count = (text: string) => Math.ceil(text.length / 4);

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
