import { describe, expect, it } from "vitest";
import { buildTranscript, type TranscriptDocument } from "~/services/speech/transcript-format";
import type { EngineWord } from "~/services/speech/types";
import { applyChange, applyChanges, ChangeRefused, identicalWords, reviewItems, vocabularyKey } from "./corrections";
import { transcriptSegments } from "./segments";

// Transcript corrections, pure (issue 24): what each change does to a document and what it leaves alone, and which
// words the review asks about.

type Spoken = [speaker: string, text: string, confidence?: number];

/** Words one second apart; a token "." "," "?" is punctuation; "~" before a word makes it low confidence. */
function transcript(lines: Spoken[], options: { gapAfter?: number[] } = {}): TranscriptDocument {
  const words: EngineWord[] = [];
  let t = 0;
  lines.forEach(([speaker, text, confidence = 0.95], line) => {
    for (const token of text.split(" ")) {
      const low = token.startsWith("~");
      const word = low ? token.slice(1) : token;
      const punctuation = /^[.,?!]$/.test(word);
      words.push({ text: word, start: t, end: t + 0.5, confidence: low ? 0.3 : confidence, speaker, punctuation });
      t += 1;
    }
    t += options.gapAfter?.[line] ?? 0;
  });
  return buildTranscript({ engine: "local", language: "de", audioSeconds: t + 1, words });
}

const consultation = () =>
  transcript([
    ["S1", "Nehmen Sie ~Metroprolol ?"],
    ["S2", "Ja , Metroprolol und ~Metroprolol retard ."],
  ]);

describe("a correction", () => {
  it("changes the words it names, marks them corrected and makes the texts afresh; the document given stays", () => {
    const recognised = consultation();
    const before = JSON.stringify(recognised);
    const corrected = applyChange(recognised, {
      op: "correct",
      words: [{ segment: "t0p0", index: 2 }],
      text: "Metoprolol",
    });
    expect(JSON.stringify(recognised)).toBe(before);
    expect(corrected.turns[0]!.paragraphs[0]![2]).toMatchObject({ text: "Metoprolol", reviewed: "corrected" });
    expect(corrected.raw_transcript).toBe("Nehmen Sie Metoprolol? Ja, Metroprolol und Metroprolol retard.");
    expect(corrected.formatted_transcript).toContain("Sprecher 1:\nNehmen Sie Metoprolol?");
    // A corrected word is no longer marked as uncertain.
    expect(corrected.highlighted_transcript).not.toContain('<mark class="confidence-low">Metoprolol');
  });

  it("at every identical occurrence names exactly the words that read the same", () => {
    const document = consultation();
    const refs = identicalWords(document, "Metroprolol");
    expect(refs).toEqual([
      { segment: "t0p0", index: 2 },
      { segment: "t1p0", index: 2 },
      { segment: "t1p0", index: 4 },
    ]);
    const corrected = applyChange(document, { op: "correct", words: refs, text: "Metoprolol" });
    expect(corrected.raw_transcript).toBe("Nehmen Sie Metoprolol? Ja, Metoprolol und Metoprolol retard.");
    expect(identicalWords(document, "metroprolol")).toEqual([]);
  });

  it("refuses a word that is not there or is a punctuation mark", () => {
    const document = consultation();
    for (const ref of [
      { segment: "t9p0", index: 0 },
      { segment: "t0p0", index: 99 },
      { segment: "t0p0", index: 3 },
    ]) {
      expect(() => applyChange(document, { op: "correct", words: [ref], text: "x" })).toThrow(ChangeRefused);
    }
  });
});

describe("speakers", () => {
  it("are named by role or name, in the transcript's language, in every text and segment", () => {
    const named = applyChanges(consultation(), [
      { op: "name", speaker: "S1", role: "doctor", name: null },
      { op: "name", speaker: "S2", role: null, name: "Frau Weber" },
    ]);
    expect(named.formatted_transcript).toBe(
      "Ärztin/Arzt:\nNehmen Sie Metroprolol?\n\nFrau Weber:\nJa, Metroprolol und Metroprolol retard.",
    );
    expect(named.highlighted_transcript).toContain("<h3>Ärztin/Arzt</h3>");
    expect(transcriptSegments(named).map((s) => s.speaker)).toEqual(["Ärztin/Arzt", "Frau Weber"]);
    const unnamed = applyChange(named, { op: "name", speaker: "S2", role: null, name: null });
    expect(unnamed.speaker_names).toEqual({ S1: { role: "doctor", name: null } });
  });

  it("keep a label such as __proto__ a label like any other", () => {
    const document = transcript([["__proto__", "Guten Tag ."]]);
    const named = applyChange(document, { op: "name", speaker: "__proto__", role: null, name: "Dr. Roth" });
    expect(Object.hasOwn(named.speaker_names!, "__proto__")).toBe(true);
    expect(named.formatted_transcript).toBe("Dr. Roth:\nGuten Tag.");
    expect(({} as Record<string, unknown>).role).toBeUndefined();
  });

  it("are merged: every turn of one becomes the other's, and its name goes", () => {
    const document = transcript([
      ["S1", "Guten Tag ."],
      ["S2", "Hallo ."],
      ["S3", "Ich bin die Tochter ."],
    ]);
    const merged = applyChanges(document, [
      { op: "name", speaker: "S3", role: "relative", name: null },
      { op: "merge", from: "S3", into: "S2" },
    ]);
    expect(merged.turns.map((t) => [t.speaker, t.speaker_number])).toEqual([
      ["S1", 1],
      ["S2", 2],
      ["S2", 2],
    ]);
    expect(Object.keys(merged.speakers_info)).toEqual(["S1", "S2"]);
    expect(merged.speaker_names).toBeUndefined();
    expect(() => applyChange(document, { op: "merge", from: "S1", into: "S1" })).toThrow(ChangeRefused);
    expect(() => applyChange(document, { op: "merge", from: "S9", into: "S1" })).toThrow(ChangeRefused);
  });

  it("get a moved paragraph: the turn is split around it and every segment keeps its id", () => {
    // Seven sentences make two paragraphs in S1's first turn.
    const document = transcript([
      ["S1", "Eins . Zwei . Drei . Vier . Fünf . Sechs . Sieben ."],
      ["S2", "Acht ."],
      ["S1", "Neun ."],
    ]);
    const before = transcriptSegments(document).map((s) => [s.id, s.text]);
    expect(before.map(([id]) => id)).toEqual(["t0p0", "t0p1", "t1p0", "t2p0"]);
    const moved = applyChange(document, { op: "move", segment: "t0p1", to: "S2" });
    expect(moved.turns.map((t) => t.speaker)).toEqual(["S1", "S2", "S2", "S1"]);
    expect(transcriptSegments(moved).map((s) => [s.id, s.text])).toEqual(before);
    expect(transcriptSegments(moved).find((s) => s.id === "t0p1")!.speakerNumber).toBe(2);
    // Moved again, the ids still hold; a one-paragraph turn just changes hands.
    const back = applyChange(moved, { op: "move", segment: "t2p0", to: "S2" });
    expect(transcriptSegments(back).map((s) => [s.id, s.text])).toEqual(before);
    expect(back.turns.at(-1)!.speaker).toBe("S2");
    expect(() => applyChange(document, { op: "move", segment: "t1p0", to: "S2" })).toThrow(ChangeRefused);
  });
});

describe("the review", () => {
  it("lists uncertain words in order with their sentence, until they are confirmed or corrected", () => {
    const document = consultation();
    const items = reviewItems(document, new Set());
    expect(items.map((i) => [i.word, i.text, i.reasons])).toEqual([
      [{ segment: "t0p0", index: 2 }, "Metroprolol", ["low_confidence"]],
      [{ segment: "t1p0", index: 4 }, "Metroprolol", ["low_confidence"]],
    ]);
    expect(items[0]).toMatchObject({ before: "Nehmen Sie", after: "?", afterJoins: true, occurrences: 3 });
    const confirmed = applyChange(document, { op: "confirm", words: [{ segment: "t0p0", index: 2 }] });
    expect(reviewItems(confirmed, new Set()).map((i) => i.word)).toEqual([{ segment: "t1p0", index: 4 }]);
  });

  it("doubts a vocabulary word heard uncertainly or in a stretch without speech, and says why", () => {
    const document = transcript(
      [
        ["S1", "Wir geben ~Bisoprolol ."],
        ["S2", "Kardiomyopathie"],
        ["S1", "Gut so , danke ."],
      ],
      { gapAfter: [3, 3] },
    );
    const vocabulary = new Set(["bisoprolol", "kardiomyopathie", vocabularyKey("Gut.")]);
    const items = reviewItems(document, vocabulary);
    expect(items.map((i) => [i.text, i.reasons])).toEqual([
      ["Bisoprolol", ["low_confidence", "vocabulary_uncertain"]],
      ["Kardiomyopathie", ["vocabulary_in_silence"]],
    ]);
  });

  it("asks about a word no lexicon knows, confident or not: once where it is first said, at every doubtful moment", () => {
    const document = transcript([
      ["S1", "Nehmen Sie Metoprolool ?"],
      ["S2", "Ja , Metoprolool , und ~Metoprolool retard ."],
    ]);
    const knows = (text: string) => vocabularyKey(text) !== "metoprolool";
    const items = reviewItems(document, new Set(), knows);
    expect(items.map((i) => [i.word, i.reasons])).toEqual([
      [{ segment: "t0p0", index: 2 }, ["unknown_word"]],
      [{ segment: "t1p0", index: 5 }, ["low_confidence", "unknown_word"]],
    ]);
    expect(items[0]!.occurrences).toBe(3);
    // A term of the doctor's vocabulary is known, however strange it looks to a lexicon.
    expect(reviewItems(document, new Set(["metoprolool"]), knows).map((i) => i.reasons)).toEqual([
      ["low_confidence", "vocabulary_uncertain"],
    ]);
  });
});
