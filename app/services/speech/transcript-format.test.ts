import { describe, expect, it } from "vitest";
import { buildTranscript, confidenceLevel, isEmptyResult } from "./transcript-format";
import type { EngineResult, EngineWord } from "./types";

// A multi-speaker result as an engine returns it: words with times, confidence and speaker labels,
// punctuation as tokens of their own.
function turn(speaker: string | null, start: number, sentences: string[], confidence = 0.95): EngineWord[] {
  const words: EngineWord[] = [];
  let t = start;
  for (const sentence of sentences) {
    for (const text of sentence.replace(/[.?!]$/, "").split(" ")) {
      words.push({ text, start: t, end: t + 0.4, confidence, speaker });
      t += 0.5;
    }
    words.push({
      text: sentence.slice(-1),
      start: t,
      end: t,
      confidence: 1,
      speaker,
      punctuation: true,
      endOfSentence: true,
    });
  }
  return words;
}

const doctor = [
  "Guten Morgen Frau Müller.",
  "Wie geht es Ihnen?",
  "Haben Sie Schmerzen in der Brust?",
  "Seit wann ist das so?",
  "Nehmen Sie Ihre Tabletten?",
  "Wir machen ein EKG.",
  "Danach sprechen wir weiter.",
  "Bitte legen Sie sich hin.",
];

function fixture(): EngineResult {
  const words = [
    ...turn("S1", 0, doctor),
    ...turn("S2", 30, ["Seit drei Tagen.", "Vor allem nachts!"]),
    ...turn("S1", 40, ["Das schauen wir uns an."]),
  ];
  // One word each of low and medium confidence, and a script tag spoken into the transcript.
  words[1]!.confidence = 0.3; // "Morgen"
  words[2]!.confidence = 0.7; // "Frau"
  words.push({ text: "<script>alert(1)</script>", start: 45, end: 46, confidence: 0.4, speaker: "S2" });
  return { engine: "speechmatics", language: "de", audioSeconds: 46.2, words };
}

describe("transcript normalisation", () => {
  it("groups words into turns per speaker and splits paragraphs after every 6 sentences", () => {
    const transcript = buildTranscript(fixture(), new Date("2026-11-21T10:00:00Z"));
    expect(transcript.turns.map((t) => [t.speaker, t.speaker_number, t.paragraphs.length])).toEqual([
      ["S1", 1, 2],
      ["S2", 2, 1],
      ["S1", 1, 1],
      ["S2", 2, 1],
    ]);
    const [first] = transcript.turns;
    expect(first!.paragraphs[0]!.filter((w) => w.text === "." || w.text === "?")).toHaveLength(6);
    expect(transcript.formatted_transcript.split("\n\n").slice(0, 3)).toEqual([
      "Sprecher 1:\nGuten Morgen Frau Müller. Wie geht es Ihnen? Haben Sie Schmerzen in der Brust? Seit wann ist das so? " +
        "Nehmen Sie Ihre Tabletten? Wir machen ein EKG.",
      "Danach sprechen wir weiter. Bitte legen Sie sich hin.",
      "Sprecher 2:\nSeit drei Tagen. Vor allem nachts!",
    ]);
    expect(transcript.raw_transcript.startsWith("Guten Morgen Frau Müller. Wie geht es Ihnen?")).toBe(true);
    expect(transcript.word_count).toBe(transcript.raw_transcript.split(" ").length);
    expect(transcript.created_at).toBe("2026-11-21T10:00:00.000Z");
  });

  it("reports per speaker the turns, the seconds spoken and the first appearance", () => {
    const { speakers_info } = buildTranscript(fixture());
    expect(speakers_info.S1).toEqual({ total_segments: 2, total_duration: expect.any(Number), first_appearance: 0 });
    expect(speakers_info.S2!.total_segments).toBe(2);
    expect(speakers_info.S2!.first_appearance).toBe(30);
    // S2's first turn runs from 30 s to its "!" at 33 s; its second from 45 s to 46 s.
    expect(speakers_info.S2!.total_duration).toBeCloseTo(3 + 1, 3);
  });

  it("counts speakers labelled __proto__ or constructor as speakers, without touching Object (ASVS 15.3.6)", () => {
    const words = [...turn("__proto__", 0, ["Guten Tag."]), ...turn("constructor", 5, ["Hallo."])];
    const { speakers_info } = buildTranscript({ ...fixture(), words });
    expect(Object.keys(speakers_info)).toEqual(["__proto__", "constructor"]);
    expect(Object.getOwnPropertyDescriptor(speakers_info, "__proto__")?.value).toMatchObject({ total_segments: 1 });
    expect(Object.getOwnPropertyDescriptor(speakers_info, "constructor")?.value).toMatchObject({ first_appearance: 5 });
    expect(({} as Record<string, unknown>).total_segments).toBeUndefined();
    expect((Object as unknown as Record<string, unknown>).total_segments).toBeUndefined();
  });

  it("gives every word a confidence level and highlights low and medium ones as escaped markup", () => {
    const transcript = buildTranscript(fixture());
    const words = transcript.turns.flatMap((t) => t.paragraphs.flat());
    expect(words.find((w) => w.text === "Morgen")!.confidence_level).toBe("low");
    expect(words.find((w) => w.text === "Frau")!.confidence_level).toBe("medium");
    expect(words.find((w) => w.text === "Guten")!.confidence_level).toBe("high");
    expect(transcript.highlighted_transcript).toContain('<mark class="confidence-low">Morgen</mark>');
    expect(transcript.highlighted_transcript).toContain('<mark class="confidence-medium">Frau</mark>');
    // The spoken script tag is text in every form, and inert markup in the highlighted one.
    expect(transcript.raw_transcript).toContain("<script>alert(1)</script>");
    expect(transcript.highlighted_transcript).not.toContain("<script>");
    expect(transcript.highlighted_transcript).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("uses the thresholds 0.5 and 0.85, and English labels for English transcripts", () => {
    expect([0, 0.49, 0.5, 0.84, 0.85, 1, Number.NaN].map(confidenceLevel)).toEqual([
      "low",
      "low",
      "medium",
      "medium",
      "high",
      "high",
      "low",
    ]);
    const english = buildTranscript({ ...fixture(), language: "en" });
    expect(english.formatted_transcript.startsWith("Speaker 1:\n")).toBe(true);
  });

  it("treats words without a speaker as one speaker, and silence or punctuation alone as empty", () => {
    const single = buildTranscript({
      engine: "openai",
      language: "de",
      audioSeconds: 3,
      words: turn(null, 0, ["Hallo."]),
    });
    expect(Object.keys(single.speakers_info)).toEqual(["S1"]);
    expect(isEmptyResult({ engine: "local", language: "de", audioSeconds: 3, words: [] })).toBe(true);
    expect(
      isEmptyResult({
        engine: "local",
        language: "de",
        audioSeconds: 3,
        words: [{ text: ".", start: 0, end: 0, confidence: 1, speaker: null, punctuation: true }],
      }),
    ).toBe(true);
    expect(isEmptyResult(fixture())).toBe(false);
  });
});
