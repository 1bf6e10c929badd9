import {
  joinWords,
  SPEAKER_ROLES,
  withTexts,
  type SpeakerName,
  type SpeakerRole,
  type TranscriptDocument,
  type TranscriptTurn,
  type TranscriptWord,
} from "~/services/speech/transcript-format";
import { paragraphSegmentId } from "./segments";

// A transcript's corrections (issue 24, ADR 0031), pure: what one change does to a transcript document, the current
// transcript as the recognised one with every change applied in order, and the words a doctor should look at again.
// The service (corrections.server.ts) stores the changes as versions; nothing here reads or writes anything.
//
// Words are named by their paragraph's segment id and their place in it (`{ segment: "t3p0", index: 5 }`): the id is
// stable (segments.ts), and the index holds because a change never adds or removes a word — a correction replaces a
// word's text, a move hands a whole paragraph to another speaker.

export const CORRECTION_MAX_CHARS = 60;
export const SPEAKER_NAME_MAX_CHARS = 40;
/** A vocabulary word with this much silence on both sides, or itself this long, is doubted (ADR 0031). */
export const SILENCE_SECONDS = 2;

export type WordRef = { segment: string; index: number };

export type TranscriptChange =
  | { op: "correct"; words: WordRef[]; text: string }
  | { op: "confirm"; words: WordRef[] }
  | { op: "name"; speaker: string; role: SpeakerRole | null; name: string | null }
  | { op: "merge"; from: string; into: string }
  | { op: "move"; segment: string; to: string };

export { SPEAKER_ROLES };

/** A change that does not fit the transcript it is made on; `message` is an i18n key. */
export class ChangeRefused extends Error {
  constructor(
    message: string,
    readonly kind: "invalid" | "not_found" = "invalid",
  ) {
    super(message);
  }
}

type Place = { turn: number; paragraph: number };

function places(document: Pick<TranscriptDocument, "turns">) {
  const found = new Map<string, Place>();
  document.turns.forEach((turn, i) =>
    turn.paragraphs.forEach((_, j) => found.set(paragraphSegmentId(turn, i, j), { turn: i, paragraph: j })),
  );
  return found;
}

/** The word a reference names, or undefined (no such segment or index, or a punctuation mark). */
export function wordAt(document: Pick<TranscriptDocument, "turns">, ref: WordRef): TranscriptWord | undefined {
  const place = places(document).get(ref.segment);
  if (!place) return undefined;
  const word = document.turns[place.turn]!.paragraphs[place.paragraph]![ref.index];
  return word && !word.punctuation ? word : undefined;
}

/** Every word whose text is exactly `text` (case and all): "apply to every identical occurrence". */
export function identicalWords(document: Pick<TranscriptDocument, "turns">, text: string): WordRef[] {
  const refs: WordRef[] = [];
  document.turns.forEach((turn, i) =>
    turn.paragraphs.forEach((words, j) =>
      words.forEach((word, index) => {
        if (!word.punctuation && word.text === text) refs.push({ segment: paragraphSegmentId(turn, i, j), index });
      }),
    ),
  );
  return refs;
}

function speakerNumberOf(document: TranscriptDocument, speaker: string) {
  return document.turns.find((turn) => turn.speaker === speaker)?.speaker_number;
}

function cloneTurns(turns: TranscriptTurn[]): TranscriptTurn[] {
  return turns.map((turn) => ({
    ...turn,
    paragraphs: turn.paragraphs.map((words) => words.map((word) => ({ ...word }))),
    ...(turn.segment_ids ? { segment_ids: [...turn.segment_ids] } : {}),
  }));
}

/** The names as a Map: a speaker label is any string, "__proto__" too, so never an index into a plain object. */
function namesOf(document: TranscriptDocument) {
  return new Map<string, SpeakerName>(Object.entries(document.speaker_names ?? {}));
}

function withNames(document: TranscriptDocument, names: Map<string, SpeakerName>): TranscriptDocument {
  const { speaker_names: _old, ...rest } = document;
  return names.size > 0 ? { ...rest, speaker_names: Object.fromEntries(names) } : rest;
}

function editWords(document: TranscriptDocument, refs: WordRef[], edit: (word: TranscriptWord) => void) {
  if (refs.length === 0) throw new ChangeRefused("transcriptions:corrections.errors.wordNotFound", "not_found");
  for (const ref of refs) {
    const word = wordAt(document, ref);
    if (!word) throw new ChangeRefused("transcriptions:corrections.errors.wordNotFound", "not_found");
    edit(word);
  }
}

function requireSpeaker(document: TranscriptDocument, speaker: string) {
  const number = speakerNumberOf(document, speaker);
  if (number === undefined) throw new ChangeRefused("transcriptions:corrections.errors.speakerNotFound", "not_found");
  return number;
}

function span(paragraphs: TranscriptWord[][]) {
  const words = paragraphs.flat();
  return { start: words[0]?.start ?? 0, end: words.at(-1)?.end ?? 0 };
}

/** One paragraph to another speaker: the turn is split around it, every turn keeping its paragraphs' ids. */
function move(document: TranscriptDocument, segment: string, to: string): TranscriptDocument {
  const place = places(document).get(segment);
  if (!place) throw new ChangeRefused("transcriptions:corrections.errors.segmentNotFound", "not_found");
  const number = requireSpeaker(document, to);
  const turn = document.turns[place.turn]!;
  if (turn.speaker === to) throw new ChangeRefused("transcriptions:corrections.errors.sameSpeaker");
  if (turn.paragraphs.length === 1) {
    document.turns[place.turn] = { ...turn, speaker: to, speaker_number: number };
    return document;
  }
  // From the first split on, every turn names its paragraphs' ids: the positions change, the ids do not.
  const turns: TranscriptTurn[] = document.turns.map((t, i) => ({
    ...t,
    segment_ids: t.paragraphs.map((_, j) => paragraphSegmentId(t, i, j)),
  }));
  const ids = turns[place.turn]!.segment_ids!;
  const part = (from: number, until: number, speaker: string, speakerNumber: number): TranscriptTurn[] => {
    const paragraphs = turn.paragraphs.slice(from, until);
    if (paragraphs.length === 0) return [];
    return [
      { speaker, speaker_number: speakerNumber, ...span(paragraphs), paragraphs, segment_ids: ids.slice(from, until) },
    ];
  };
  turns.splice(
    place.turn,
    1,
    ...part(0, place.paragraph, turn.speaker, turn.speaker_number),
    ...part(place.paragraph, place.paragraph + 1, to, number),
    ...part(place.paragraph + 1, turn.paragraphs.length, turn.speaker, turn.speaker_number),
  );
  return { ...document, turns };
}

/** What one change makes of a transcript: a new document, the texts made afresh; the one given is left as it was. */
export function applyChange(given: TranscriptDocument, change: TranscriptChange): TranscriptDocument {
  let document: TranscriptDocument = { ...given, turns: cloneTurns(given.turns) };
  switch (change.op) {
    case "correct":
      editWords(document, change.words, (word) => {
        word.text = change.text;
        word.reviewed = "corrected";
      });
      break;
    case "confirm":
      editWords(document, change.words, (word) => {
        word.reviewed ??= "confirmed";
      });
      break;
    case "name": {
      requireSpeaker(document, change.speaker);
      const names = namesOf(document);
      if (change.role === null && change.name === null) names.delete(change.speaker);
      else names.set(change.speaker, { role: change.role, name: change.name });
      document = withNames(document, names);
      break;
    }
    case "merge": {
      if (change.from === change.into) throw new ChangeRefused("transcriptions:corrections.errors.sameSpeaker");
      requireSpeaker(document, change.from);
      const number = requireSpeaker(document, change.into);
      document.turns = document.turns.map((turn) =>
        turn.speaker === change.from ? { ...turn, speaker: change.into, speaker_number: number } : turn,
      );
      const names = namesOf(document);
      names.delete(change.from);
      document = withNames(document, names);
      break;
    }
    case "move":
      document = move(document, change.segment, change.to);
      break;
  }
  return withTexts(document);
}

/** The current transcript: the recognised one with the changes of every later version, in order. */
export function applyChanges(recognised: TranscriptDocument, changes: TranscriptChange[]): TranscriptDocument {
  return changes.reduce(applyChange, recognised);
}

// ---- Review ----

export type ReviewReason =
  "low_confidence" | "medium_confidence" | "vocabulary_uncertain" | "vocabulary_in_silence" | "unknown_word";

export type ReviewItem = {
  word: WordRef;
  text: string;
  start: number;
  end: number;
  confidence: number;
  confidenceLevel: TranscriptWord["confidence_level"];
  speaker: string;
  reasons: ReviewReason[];
  /** The sentence around the word, as text: before it, and after it (`afterJoins`: no space, it starts with a mark). */
  before: string;
  after: string;
  afterJoins: boolean;
  /** How many words of the transcript read exactly like this one (itself included). */
  occurrences: number;
};

const SENTENCE_END = /[.!?…]$/;
const CONTEXT_WORDS = 12;

/** A word as the vocabulary compares it: lower case, without marks around it. */
export function vocabularyKey(text: string) {
  return text
    .trim()
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "")
    .toLocaleLowerCase("de");
}

function sentenceAround(words: TranscriptWord[], index: number) {
  let from = index;
  while (from > 0 && index - from < CONTEXT_WORDS) {
    const previous = words[from - 1]!;
    if (previous.punctuation && SENTENCE_END.test(previous.text)) break;
    from--;
  }
  let until = index + 1;
  while (until < words.length && until - index <= CONTEXT_WORDS) {
    const word = words[until]!;
    until++;
    if (word.punctuation && SENTENCE_END.test(word.text)) break;
  }
  const after = words.slice(index + 1, until);
  return {
    before: joinWords(words.slice(from, index)),
    after: joinWords(after),
    afterJoins: after[0]?.punctuation ?? false,
  };
}

/**
 * The words a doctor should hear again, in the order spoken: every low or medium confidence word not yet confirmed or
 * corrected, and every word of the vocabulary (built-in and the doctor's own, `vocabulary` as vocabularyKey gives
 * them) that was heard only uncertainly or in a stretch without other speech — a vocabulary given to an engine is
 * known to make it "hear" its terms in silence and noise, so such a word is doubted rather than trusted (ADR 0031) —
 * and every word that neither the language's lexicon (`knows`, word-lexicon.server.ts) nor the vocabulary knows, as
 * confident as the engine may be: a misheard rare term is often a word no language has. Such a word is listed where
 * it first occurs (a fix can apply to every identical occurrence); a doubt about the engine's confidence is listed
 * wherever it arises.
 */
export function reviewItems(
  document: TranscriptDocument,
  vocabulary: ReadonlySet<string>,
  knows: (text: string) => boolean = () => true,
): ReviewItem[] {
  const spoken = document.turns.flatMap((turn, i) =>
    turn.paragraphs.flatMap((words, j) =>
      words.flatMap((word, index) =>
        word.punctuation ? [] : [{ word, index, words, turn, segment: paragraphSegmentId(turn, i, j) }],
      ),
    ),
  );
  const counts = new Map<string, number>();
  for (const { word } of spoken) counts.set(word.text, (counts.get(word.text) ?? 0) + 1);
  const items: ReviewItem[] = [];
  const unknownListed = new Set<string>();
  spoken.forEach(({ word, index, words, turn, segment }, n) => {
    if (word.reviewed) return;
    const reasons: ReviewReason[] = [];
    if (word.confidence_level === "low") reasons.push("low_confidence");
    if (word.confidence_level === "medium") reasons.push("medium_confidence");
    const key = vocabularyKey(word.text);
    if (key && !vocabulary.has(key) && !knows(word.text)) {
      if (!unknownListed.has(key) || reasons.length > 0) reasons.push("unknown_word");
      unknownListed.add(key);
    }
    if (vocabulary.has(key)) {
      if (word.confidence_level !== "high") reasons.push("vocabulary_uncertain");
      const previousEnd = n > 0 ? spoken[n - 1]!.word.end : 0;
      const nextStart = spoken[n + 1]?.word.start ?? Math.max(document.audio_seconds, word.end);
      const silentAround = word.start - previousEnd >= SILENCE_SECONDS && nextStart - word.end >= SILENCE_SECONDS;
      if (silentAround || word.end - word.start >= SILENCE_SECONDS) reasons.push("vocabulary_in_silence");
    }
    if (reasons.length === 0) return;
    items.push({
      word: { segment, index },
      text: word.text,
      start: word.start,
      end: word.end,
      confidence: word.confidence,
      confidenceLevel: word.confidence_level,
      speaker: turn.speaker,
      reasons,
      ...sentenceAround(words, index),
      occurrences: counts.get(word.text) ?? 1,
    });
  });
  return items;
}
