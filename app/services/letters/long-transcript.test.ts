import { describe, expect, it } from "vitest";
import { packTranscript, type TranscriptUnit } from "./long-transcript";

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
