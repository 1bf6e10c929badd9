import { describe, expect, it } from "vitest";
import type { LiveResult, TranscriptMessage } from "~/live/protocol";
import { finalEnd, keepAfter, shift } from "./runner-timeline";

const word = (content: string, start: number, end: number): LiveResult => ({
  type: "word",
  start_time: start,
  end_time: end,
  alternatives: [{ content, confidence: 0.9, speaker: "S1" }],
});
const mark = (content: string, at: number): LiveResult => ({
  type: "punctuation",
  start_time: at,
  end_time: at,
  attaches_to: "previous",
  alternatives: [{ content, confidence: 1 }],
});
const final = (...results: LiveResult[]): TranscriptMessage => ({
  message: "AddTranscript",
  metadata: { start_time: results[0]?.start_time ?? 0, end_time: results.at(-1)?.end_time ?? 0, transcript: "" },
  results,
});
const contents = (message: TranscriptMessage | null) => message?.results.map((r) => r.alternatives[0].content);

describe("a resumed run's results on the session's time line", () => {
  it("moves every time by the run's start, to the millisecond", () => {
    const moved = shift(final(word("Tag", 0.1, 0.45)), 1.792);
    expect(moved.results[0]).toMatchObject({ start_time: 1.892, end_time: 2.242 });
    expect(moved.metadata).toMatchObject({ start_time: 1.892, end_time: 2.242 });
  });

  it("drops words heard again before the end of what is final, with their marks, and keeps the first new one", () => {
    const message = final(word("Guten", 1.9, 2.1), word("Tag", 2.1, 2.3), mark(",", 2.3), word("wie", 2.25, 2.6));
    const kept = keepAfter(message, 2.3);
    expect(contents(kept.message)).toEqual(["wie"]);
    // More than half of "wie" lies after 2.3 s: it stays, starting where the final words end.
    expect(kept.message!.results[0]).toMatchObject({ start_time: 2.3, end_time: 2.6 });
    expect(kept.message!.metadata).toMatchObject({ start_time: 2.3, transcript: "wie" });
    expect(kept.finalUntil).toBeNull();
  });

  it("keeps everything after the first new word, and everything once nothing is left to drop", () => {
    const message = final(word("geht", 2.7, 2.9), mark("?", 2.9), word("Gut", 3.2, 3.4));
    expect(keepAfter(message, 2.3).message?.results).toEqual(message.results);
    expect(keepAfter(message, null)).toEqual({ message, finalUntil: null });
  });

  it("drops a word mostly before the final end and a message with nothing new, still waiting for a new word", () => {
    expect(keepAfter(final(word("Tag", 2.0, 2.5)), 2.3)).toEqual({ message: null, finalUntil: 2.3 });
    const empty = final();
    expect(keepAfter(empty, 2.3)).toEqual({ message: empty, finalUntil: 2.3 });
  });

  it("knows where a final's words end", () => {
    expect(finalEnd(final(word("Tag", 2.1, 2.3), mark(".", 2.3)))).toBe(2.3);
    expect(finalEnd(final())).toBeNull();
  });
});
