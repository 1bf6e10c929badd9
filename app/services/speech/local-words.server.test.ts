import { describe, expect, it } from "vitest";
import { assignSpeakers } from "./local-speakers.server";
import { withoutPromptEcho, wordsFromWhisper, type WhisperSegment } from "./local-words.server";

// The local engine's token → word rules (ADR 0011) on synthetic whisper.cpp output: what the tensorless test
// model cannot produce.

describe("whisper.cpp tokens to words", () => {
  const segment = (tokens: Array<[string, number, number, number]>, from = 0, to = 3000): WhisperSegment => ({
    from,
    to,
    text: tokens.map(([text]) => text).join(""),
    tokens: tokens.map(([text, p, f, t]) => ({ text, p, from: f, to: t })),
  });

  it("starts a word at a leading space, splits punctuation, takes the lowest token probability, maps times", () => {
    const words = wordsFromWhisper(
      [
        segment([
          ["[_BEG_]", 0.99, 0, 0],
          [" Der", 0.9, 0, 200],
          [" Patient", 0.8, 200, 600],
          [" hat", 0.95, 600, 800],
          [" Kopf", 0.7, 800, 1000],
          ["schmer", 0.4, 1000, 1200],
          ["zen", 0.9, 1200, 1400],
          [",", 0.6, 1400, 1400],
          [" 3", 0.9, 1500, 1600],
          [".", 0.85, 1600, 1600],
          ["5", 0.88, 1600, 1700],
          [" Grad", 0.9, 1700, 2000],
          [".", 0.97, 2000, 2000],
          ["[_TT_100]", 0.5, 2000, 2000],
        ]),
      ],
      { offset: 10 },
    );
    expect(words.map((w) => w.text)).toEqual(["Der", "Patient", "hat", "Kopfschmerzen", ",", "3.5", "Grad", "."]);
    expect(words.every((w) => w.speaker === "S1")).toBe(true);
    const kopf = words[3];
    expect(kopf.confidence).toBeCloseTo(0.4);
    expect(kopf.start).toBeCloseTo(10.8);
    expect(kopf.end).toBeCloseTo(11.4);
    expect(words[4]).toMatchObject({ text: ",", punctuation: true, start: kopf.end, end: kopf.end });
    expect(words[4].endOfSentence).toBeUndefined();
    expect(words[5]).toMatchObject({ text: "3.5", start: 11.5, end: 11.7 });
    expect(words[7]).toMatchObject({ text: ".", punctuation: true, endOfSentence: true, confidence: 0.97 });
    expect(words[6].punctuation).toBeUndefined();
  });

  it("keeps the dot of abbreviations, splits punctuation inside a token, marks ? and !", () => {
    const words = wordsFromWhisper([
      segment([
        [" Dr", 0.9, 0, 100],
        [".", 0.9, 100, 100],
        [" Meier", 0.9, 100, 400],
        [" gibt", 0.9, 400, 600],
        [" z", 0.9, 600, 650],
        [".", 0.9, 650, 650],
        ["B", 0.9, 650, 700],
        [".", 0.9, 700, 700],
        [" ASS", 0.9, 700, 900],
        [" i", 0.9, 900, 950],
        [".", 0.9, 950, 950],
        ["v", 0.9, 950, 1000],
        [".", 0.9, 1000, 1000],
        [" oder", 0.9, 1000, 1200],
        [" nicht?", 0.3, 1200, 1500],
        [" Doch!", 0.8, 1500, 1800],
      ]),
    ]);
    expect(words.map((w) => w.text)).toEqual([
      "Dr.",
      "Meier",
      "gibt",
      "z.B.",
      "ASS",
      "i.v.",
      "oder",
      "nicht",
      "?",
      "Doch",
      "!",
    ]);
    expect(words.filter((w) => w.punctuation).map((w) => [w.text, w.endOfSentence])).toEqual([
      ["?", true],
      ["!", true],
    ]);
    // A mark inside a letter token shares that token's probability.
    expect(words[7].confidence).toBeCloseTo(0.3);
    expect(words[8].confidence).toBeCloseTo(0.3);
  });

  it("maps window time back to the recording through the pieces of a window", () => {
    const pieces = [
      { windowStart: 0, fileStart: 5, duration: 2 },
      { windowStart: 2.1, fileStart: 40, duration: 3 },
    ];
    const words = wordsFromWhisper(
      [
        segment(
          [
            [" eins", 0.9, 500, 900],
            [" zwei", 0.9, 2300, 2800],
          ],
          0,
          5000,
        ),
      ],
      { pieces },
    );
    expect(words.map((w) => [w.text, w.start, w.end])).toEqual([
      ["eins", 5.5, 5.9],
      ["zwei", 40.2, 40.7],
    ]);
  });

  it("shares the segment's span by word length when tokens have no times", () => {
    const words = wordsFromWhisper([
      {
        from: 1000,
        to: 2000,
        text: " ab abcd.",
        tokens: [
          { text: " ab", p: 0.9 },
          { text: " abcd", p: 0.8 },
          { text: ".", p: 0.9 },
        ],
      },
    ]);
    expect(words.map((w) => w.text)).toEqual(["ab", "abcd", "."]);
    expect(words[0].start).toBeCloseTo(1);
    expect(words[0].end).toBeCloseTo(1 + 2 / 7);
    expect(words[1].end).toBeCloseTo(2);
  });

  it("takes a word's spelling from the segment text when a token held half a UTF-8 character", () => {
    const words = wordsFromWhisper([
      {
        from: 0,
        to: 1000,
        text: " über Fieber.",
        tokens: [
          { text: " \uFFFD", p: 0.6, from: 0, to: 100 },
          { text: "\uFFFDber", p: 0.7, from: 100, to: 400 },
          { text: " Fieber", p: 0.9, from: 400, to: 900 },
          { text: ".", p: 0.9, from: 900, to: 900 },
        ],
      },
    ]);
    expect(words.map((w) => w.text)).toEqual(["über", "Fieber", "."]);
    expect(words[0].confidence).toBeCloseTo(0.6);
  });

  it("gives every word speaker S1 without diarization, and S1, S2 … by first turn with it", () => {
    const words = wordsFromWhisper([
      segment([
        [" Guten", 0.9, 0, 400],
        [" Tag", 0.9, 400, 800],
        [".", 0.9, 800, 800],
        [" Hallo", 0.9, 1200, 1600],
        [".", 0.9, 1600, 1600],
      ]),
    ]);
    expect(new Set(words.map((w) => w.speaker))).toEqual(new Set(["S1"]));
    const labelled = assignSpeakers(words, [
      { start: 1.1, end: 2, speaker: 0 },
      { start: 0, end: 0.9, speaker: 3 },
    ]);
    expect(labelled.map((w) => [w.text, w.speaker])).toEqual([
      ["Guten", "S1"],
      ["Tag", "S1"],
      [".", "S1"],
      ["Hallo", "S2"],
      [".", "S2"],
    ]);
    expect(assignSpeakers(words, [])).toEqual(words);
  });

  it("drops a segment that only repeats the vocabulary prompt", () => {
    const prompt = "Kopfschmerzen, Fieber, Vorhofflimmern, Zystoskopie, Metoprolol";
    const echo = { from: 0, to: 2000, text: " Fieber, Vorhofflimmern, Zystoskopie, Metoprolol." };
    const real = { from: 2000, to: 4000, text: " Fieber seit drei Tagen." };
    const short = { from: 4000, to: 5000, text: " Fieber." };
    expect(withoutPromptEcho([echo, real, short], prompt)).toEqual([real, short]);
    expect(withoutPromptEcho([echo], "")).toEqual([echo]);
  });
});
