import { describe, expect, it } from "vitest";
import { buildTranscript } from "~/services/speech/transcript-format";
import type { EngineWord } from "~/services/speech/types";
import { segmentAnchor, transcriptSegments } from "./segments";

function words(speaker: string, text: string, from: number): EngineWord[] {
  return text.split(" ").map((token, i) => {
    const punctuation = /^[.,?!]$/.test(token);
    return { text: token, start: from + i, end: from + i + 0.5, confidence: 0.9, speaker, punctuation };
  });
}

describe("transcript segments", () => {
  it("are the paragraphs of each speaker's turn, with speaker, times and text, in the transcript's language", () => {
    const document = buildTranscript({
      engine: "local",
      language: "de",
      audioSeconds: 30,
      words: [
        ...words("S1", "Welche Medikamente nehmen Sie ?", 0),
        ...words("S2", "Ramipril 5 Milligramm morgens .", 10),
      ],
    });
    expect(transcriptSegments(document)).toEqual([
      {
        id: "t0p0",
        speaker: "Sprecher 1",
        speakerNumber: 1,
        start: 0,
        end: 4.5,
        text: "Welche Medikamente nehmen Sie?",
      },
      {
        id: "t1p0",
        speaker: "Sprecher 2",
        speakerNumber: 2,
        start: 10,
        end: 14.5,
        text: "Ramipril 5 Milligramm morgens.",
      },
    ]);
  });

  it("keep their position as id when a paragraph is empty, so a link still lands on the paragraph it names", () => {
    const turn = { speaker: "S1", speaker_number: 1, start: 0, end: 2 };
    const word = {
      text: "Kopfschmerzen",
      start: 1,
      end: 2,
      confidence: 0.9,
      confidence_level: "high" as const,
      punctuation: false,
    };
    const segments = transcriptSegments({ language_code: "en", turns: [{ ...turn, paragraphs: [[], [word]] }] });
    expect(segments.map((s) => [s.id, s.speaker])).toEqual([["t0p1", "Speaker 1"]]);
    expect(segmentAnchor(segments[0]!.id)).toBe("seg-t0p1");
  });
});
