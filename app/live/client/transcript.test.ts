import { describe, expect, it } from "vitest";
import type { LiveResult, TranscriptMessage } from "../protocol";
import { formatDuration, joinResults, segmentsOf, speakerNumber, textOf } from "./transcript";

const word = (content: string, speaker?: string): LiveResult => ({
  type: "word",
  start_time: 0,
  end_time: 0,
  alternatives: [{ content, confidence: 0.9, speaker }],
});
const mark = (content: string, speaker?: string): LiveResult => ({
  type: "punctuation",
  start_time: 0,
  end_time: 0,
  attaches_to: "previous",
  alternatives: [{ content, confidence: 1, speaker }],
});
const final = (results: LiveResult[], transcript = ""): TranscriptMessage => ({
  message: "AddTranscript",
  metadata: { start_time: 0, end_time: 1, transcript },
  results,
});

describe("transcript text", () => {
  it("joins words with spaces and attaches punctuation", () => {
    expect(joinResults([word("Guten"), word("Tag"), mark(","), word("Frau"), word("Berger"), mark(".")])).toBe(
      "Guten Tag, Frau Berger.",
    );
  });

  it("splits a final where the speaker changes; punctuation stays with the words before it", () => {
    const message = final([
      word("Wie", "S1"),
      word("geht's", "S1"),
      mark("?", "S2"),
      word("Gut", "S2"),
      mark(".", "S2"),
    ]);
    expect(segmentsOf(message)).toEqual([
      { speaker: "S1", text: "Wie geht's?" },
      { speaker: "S2", text: "Gut." },
    ]);
  });

  it("uses the metadata text when a final has no results", () => {
    expect(segmentsOf(final([], " Hallo. "))).toEqual([{ speaker: "", text: "Hallo." }]);
    expect(segmentsOf(final([], ""))).toEqual([]);
    expect(textOf(final([word("a"), word("b")], ""))).toBe("a b");
    expect(textOf(final([], "Blutdruck messen "))).toBe("Blutdruck messen");
  });

  it("numbers speakers and formats durations", () => {
    expect(speakerNumber("S2")).toBe(2);
    expect(speakerNumber("UU")).toBeNull();
    expect(formatDuration(0)).toBe("0:00");
    expect(formatDuration(75.9)).toBe("1:15");
    expect(formatDuration(45 * 60)).toBe("45:00");
    expect(formatDuration(3723)).toBe("1:02:03");
  });
});
