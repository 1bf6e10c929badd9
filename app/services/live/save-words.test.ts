import { describe, expect, it } from "vitest";
import { buildTranscript } from "../speech/transcript-format";
import { containerForMime, isLiveUploadType, sniffLiveAudio } from "./save-format.server";
import { DEFAULT_CONFIDENCE, liveResultsToWords, type LiveSegment } from "./save-words.server";

function word(content: string, start: number, end: number, speaker?: string, confidence?: number): LiveSegment {
  return { type: "word", start_time: start, end_time: end, alternatives: [{ content, speaker, confidence }] };
}
function mark(content: string, at: number, extra: Partial<LiveSegment> = {}): LiveSegment {
  return { type: "punctuation", start_time: at, end_time: at, alternatives: [{ content, speaker: "S1" }], ...extra };
}

describe("live results → engine words", () => {
  it("keeps Speechmatics words with their times, speakers and confidence; punctuation attaches to the word before", () => {
    const words = liveResultsToWords([
      word("Guten", 0, 0.4, "S1", 0.98),
      word("Tag", 0.5, 0.8, "S1", 0.4),
      mark(".", 0.8, { is_eos: true }),
      word("Hallo", 1.2, 1.6, "S2", 0.7),
      mark("?", 1.6),
    ]);
    expect(words).toEqual([
      { text: "Guten", start: 0, end: 0.4, confidence: 0.98, speaker: "S1" },
      { text: "Tag", start: 0.5, end: 0.8, confidence: 0.4, speaker: "S1" },
      {
        text: ".",
        start: 0.8,
        end: 0.8,
        confidence: DEFAULT_CONFIDENCE,
        speaker: "S1",
        punctuation: true,
        endOfSentence: true,
      },
      { text: "Hallo", start: 1.2, end: 1.6, confidence: 0.7, speaker: "S2" },
      {
        text: "?",
        start: 1.6,
        end: 1.6,
        confidence: DEFAULT_CONFIDENCE,
        speaker: "S2",
        punctuation: true,
        endOfSentence: true,
      },
    ]);
  });

  it("treats a word-typed result that is only punctuation as punctuation, and drops punctuation before any word", () => {
    const words = liveResultsToWords([mark(",", 0), word("Ja", 0.1, 0.3), word("!", 0.3, 0.3)]);
    expect(words.map((w) => [w.text, w.punctuation === true])).toEqual([
      ["Ja", false],
      ["!", true],
    ]);
  });

  it("splits a phrase segment into words spread over its time, with trailing marks as punctuation", () => {
    const words = liveResultsToWords([
      {
        start_time: 10,
        end_time: 12,
        is_eos: true,
        alternatives: [{ content: "Wie geht es Ihnen heute?", speaker: "S2" }],
      },
    ]);
    expect(words.map((w) => w.text)).toEqual(["Wie", "geht", "es", "Ihnen", "heute", "?"]);
    const spoken = words.filter((w) => !w.punctuation);
    expect(spoken[0]!.start).toBe(10);
    expect(spoken.at(-1)!.end).toBe(12);
    for (let i = 1; i < spoken.length; i++) expect(spoken[i]!.start).toBeCloseTo(spoken[i - 1]!.end, 10);
    // Longer words take longer to say.
    expect(spoken[3]!.end - spoken[3]!.start).toBeGreaterThan(spoken[2]!.end - spoken[2]!.start);
    expect(words.at(-1)).toMatchObject({ text: "?", punctuation: true, endOfSentence: true, speaker: "S2" });
    expect(new Set(words.map((w) => w.speaker))).toEqual(new Set(["S2"]));
  });

  it("carries the last known speaker over unknown ('UU'), missing or malformed labels", () => {
    const words = liveResultsToWords([
      word("eins", 0, 1, "S2"),
      word("zwei", 1, 2, "UU"),
      mark(",", 2),
      word("drei", 2, 3),
      word("vier", 3, 4, "<b>"),
      word("fünf", 4, 5, "S1"),
    ]);
    // The comma's own label (S1) changes nothing: it belongs to the word before it.
    expect(words.map((w) => w.speaker)).toEqual(["S2", "S2", "S2", "S2", "S2", "S1"]);
    expect(liveResultsToWords([word("allein", 0, 1)])[0]!.speaker).toBeNull();
  });

  it("puts an opening mark in front of the next word, skips empty results, clamps times and confidence", () => {
    const words = liveResultsToWords([
      word("Er", 0, 0.2),
      { type: "punctuation", start_time: 0.3, end_time: 0.3, attaches_to: "next", alternatives: [{ content: "„" }] },
      word("Danke", 0.3, 0.6, undefined, 1.5 as number),
      { start_time: 1, end_time: 1, alternatives: [] },
      word("   ", 1, 2),
      word("später", 3, 2),
    ]);
    expect(words.map((w) => w.text)).toEqual(["Er", "„Danke", "später"]);
    expect(words[1]!.confidence).toBe(1);
    expect(words[2]).toMatchObject({ start: 3, end: 3 });
  });

  it("gives the batch transcript shape: speakers_info, highlighted low-confidence words, sentences", () => {
    const words = liveResultsToWords([
      word("Der", 0, 0.3, "S1", 0.95),
      word("Patient", 0.3, 0.8, "S1", 0.3),
      mark(".", 0.8, { is_eos: true }),
      word("Gut", 1, 1.4, "S2", 0.6),
      mark(".", 1.4),
    ]);
    const document = buildTranscript({ engine: "speechmatics", language: "de", audioSeconds: 2, words });
    expect(document.raw_transcript).toBe("Der Patient. Gut.");
    expect(document.formatted_transcript).toBe("Sprecher 1:\nDer Patient.\n\nSprecher 2:\nGut.");
    expect(Object.keys(document.speakers_info)).toEqual(["S1", "S2"]);
    expect(document.highlighted_transcript).toContain('<mark class="confidence-low">Patient</mark>');
    expect(document.highlighted_transcript).toContain('<mark class="confidence-medium">Gut</mark>');
    expect(document.word_count).toBe(3);
  });
});

describe("recorder formats", () => {
  it("map the recorder's MIME type to the key's container (SPEC §9), default webm", () => {
    expect(containerForMime("audio/webm;codecs=opus")).toBe("webm");
    expect(containerForMime("audio/mp4")).toBe("m4a");
    expect(containerForMime("audio/mpeg")).toBe("mp3");
    expect(containerForMime("audio/wav")).toBe("wav");
    expect(containerForMime("audio/ogg;codecs=opus")).toBe("webm");
    expect(containerForMime(null)).toBe("webm");
  });

  it("accept the recorder formats with codecs parameters on the live upload path, nothing else", () => {
    for (const type of ["audio/webm", "audio/webm;codecs=opus", 'audio/ogg; codecs="opus"', "audio/mp4", "audio/mpeg"])
      expect(isLiveUploadType(type), type).toBe(true);
    for (const type of ["audio/wav", "audio/x-wav"]) expect(isLiveUploadType(type), type).toBe(true);
    for (const type of ["text/plain", "video/webm", "audio/flac", "audio/webm\r\nX: y", ""])
      expect(isLiveUploadType(type), type).toBe(false);
  });

  it("sniff WebM, Ogg and MP4 magic bytes, and nothing in text", () => {
    expect(sniffLiveAudio(Uint8Array.from([0x1a, 0x45, 0xdf, 0xa3, 0x01]))).toBe("matroska");
    expect(sniffLiveAudio(new TextEncoder().encode("OggS\0\u0002"))).toBe("ogg");
    expect(sniffLiveAudio(new TextEncoder().encode("\0\0\0\u0020ftypM4A "))).toBe("mp4");
    expect(sniffLiveAudio(new TextEncoder().encode("Das ist nur Text."))).toBeNull();
  });
});
