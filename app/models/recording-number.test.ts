import { describe, expect, it } from "vitest";
import { recordingNumbers } from "./recording-number";

describe("recordingNumbers", () => {
  it("numbers by the timestamp in the key, oldest first, whatever the list order", () => {
    const numbers = recordingNumbers([
      "audio/u1/20261121-101500-b.wav",
      "audio/u1/20251231-235959-a.mp3",
      "audio/u1/20261121-090000-c.wav",
    ]);
    expect(numbers.get("audio/u1/20251231-235959-a.mp3")).toBe(1);
    expect(numbers.get("audio/u1/20261121-090000-c.wav")).toBe(2);
    expect(numbers.get("audio/u1/20261121-101500-b.wav")).toBe(3);
  });
});
