import { describe, expect, it } from "vitest";

import type { EngineWord } from "~/services/speech/types";

import { transcriptMessage, transcriptText } from "./live-results";

const word = (text: string, start: number, end: number, extra: Partial<EngineWord> = {}): EngineWord => ({
  text,
  start,
  end,
  confidence: 0.9,
  speaker: "S1",
  ...extra,
});

describe("EngineWords as a live transcript message", () => {
  it("gives words, attached punctuation with is_eos, and the Speechmatics transcript text", () => {
    const message = transcriptMessage([
      word("Guten", 1.1, 1.4),
      word("Tag", 1.5, 1.9, { confidence: 0.42 }),
      word(",", 1.9, 1.9, { punctuation: true }),
      word("Frau", 2.0, 2.3, { speaker: null }),
      word("Dr.", 2.4, 2.7),
      word("Meier", 2.8, 3.2),
      word(".", 3.2, 3.2, { punctuation: true, endOfSentence: true }),
    ]);
    expect(message?.message).toBe("AddTranscript");
    expect(message?.metadata).toEqual({ start_time: 1.1, end_time: 3.2, transcript: "Guten Tag, Frau Dr. Meier." });
    expect(message?.results[1]).toEqual({
      type: "word",
      start_time: 1.5,
      end_time: 1.9,
      alternatives: [{ content: "Tag", confidence: 0.42, speaker: "S1" }],
    });
    expect(message?.results[2]).toEqual({
      type: "punctuation",
      start_time: 1.9,
      end_time: 1.9,
      attaches_to: "previous",
      is_eos: false,
      alternatives: [{ content: ",", confidence: 0.9, speaker: "S1" }],
    });
    // An engine without speakers still gives the live protocol's single speaker.
    expect(message?.results[3].alternatives[0].speaker).toBe("S1");
    expect(message?.results[6]).toMatchObject({ type: "punctuation", is_eos: true, attaches_to: "previous" });
  });

  it("rounds times to the millisecond and can make a partial", () => {
    const message = transcriptMessage([word("drei", 0.1 + 0.2, 0.7000000001)], "AddPartialTranscript");
    expect(message?.message).toBe("AddPartialTranscript");
    expect(message?.results[0]).toMatchObject({ start_time: 0.3, end_time: 0.7 });
    expect(message?.metadata).toMatchObject({ start_time: 0.3, end_time: 0.7, transcript: "drei" });
  });

  it("says nothing for no words", () => {
    expect(transcriptMessage([])).toBeUndefined();
    expect(transcriptMessage([word("", 1, 2)])).toBeUndefined();
  });

  it("joins text as Speechmatics does for a mark that attaches to the next word", () => {
    const results = [
      { type: "word" as const, start_time: 0, end_time: 1, alternatives: [{ content: "a", confidence: 1 }] },
      {
        type: "punctuation" as const,
        start_time: 1,
        end_time: 1,
        attaches_to: "next" as const,
        alternatives: [{ content: "(", confidence: 1 }],
      },
      { type: "word" as const, start_time: 1, end_time: 2, alternatives: [{ content: "b", confidence: 1 }] },
    ];
    // Our engines never produce "next", but a relayed transcript may: it takes no space after it.
    expect(transcriptText(results)).toBe("a (b");
  });
});
