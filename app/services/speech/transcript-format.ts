import type { EngineResult, EngineWord } from "./types";

// SPEC §3 "Transcript" from any engine's words: turns per speaker, speakers_info, paragraphs split after
// every 6 sentences, a confidence level per word, and the three text forms (raw, formatted, highlighted).
// Pure functions: the same input gives the same transcript, whichever engine produced it.

/** Confidence thresholds (README "Transcription"): below LOW is low, below HIGH is medium, else high. */
export const CONFIDENCE_LOW_BELOW = 0.5;
export const CONFIDENCE_HIGH_FROM = 0.85;
export const SENTENCES_PER_PARAGRAPH = 6;

export type ConfidenceLevel = "low" | "medium" | "high";

export type TranscriptWord = {
  text: string;
  start: number;
  end: number;
  confidence: number;
  confidence_level: ConfidenceLevel;
  /** Punctuation attaches to the word before it, with no space. */
  punctuation: boolean;
};

export type TranscriptTurn = {
  speaker: string;
  /** 1-based number of the speaker in order of first appearance (colour and label). */
  speaker_number: number;
  start: number;
  end: number;
  /** Each paragraph is a list of words; a new paragraph starts after every 6 sentences. */
  paragraphs: TranscriptWord[][];
};

export type SpeakerInfo = { total_segments: number; total_duration: number; first_appearance: number };

export type TranscriptDocument = {
  version: 1;
  engine: string;
  language_code: string;
  audio_seconds: number;
  created_at: string;
  raw_transcript: string;
  formatted_transcript: string;
  highlighted_transcript: string;
  speakers_info: Record<string, SpeakerInfo>;
  turns: TranscriptTurn[];
  word_count: number;
};

export function confidenceLevel(confidence: number): ConfidenceLevel {
  if (!(confidence >= CONFIDENCE_LOW_BELOW)) return "low"; // NaN counts as low
  return confidence < CONFIDENCE_HIGH_FROM ? "medium" : "high";
}

const SENTENCE_END = /[.!?…]$/;
const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

function isSentenceEnd(word: EngineWord) {
  return word.endOfSentence ?? (word.punctuation === true && SENTENCE_END.test(word.text));
}

/** Words joined as text: a space before each word, none before punctuation. */
export function joinWords(words: Array<{ text: string; punctuation: boolean }>): string {
  let text = "";
  for (const word of words) {
    if (!word.text) continue;
    text += word.punctuation || text === "" ? word.text : ` ${word.text}`;
  }
  return text;
}

/** Consecutive words of one speaker form a turn; a turn's sentences are grouped 6 to a paragraph. */
function buildTurns(words: EngineWord[]): TranscriptTurn[] {
  const numbers = new Map<string, number>();
  const turns: TranscriptTurn[] = [];
  let current: TranscriptTurn | undefined;
  let sentences = 0;
  for (const word of words) {
    const text = word.text.trim();
    if (!text) continue;
    // Punctuation belongs to the turn it closes, whoever the engine says spoke it.
    const speaker = word.punctuation && current ? current.speaker : (word.speaker ?? "S1");
    if (!current || current.speaker !== speaker) {
      if (!numbers.has(speaker)) numbers.set(speaker, numbers.size + 1);
      current = { speaker, speaker_number: numbers.get(speaker)!, start: word.start, end: word.end, paragraphs: [[]] };
      turns.push(current);
      sentences = 0;
    }
    let paragraph = current.paragraphs[current.paragraphs.length - 1]!;
    if (sentences === SENTENCES_PER_PARAGRAPH && !word.punctuation) {
      paragraph = [];
      current.paragraphs.push(paragraph);
      sentences = 0;
    }
    paragraph.push({
      text,
      start: round(word.start),
      end: round(word.end),
      confidence: Math.round(word.confidence * 1000) / 1000,
      confidence_level: confidenceLevel(word.confidence),
      punctuation: word.punctuation === true,
    });
    current.end = Math.max(current.end, word.end);
    if (isSentenceEnd(word)) sentences++;
  }
  return turns.map((turn) => ({ ...turn, start: round(turn.start), end: round(turn.end) }));
}

/**
 * Per speaker label, in order of appearance. Labels come from the engine or, for a live save, from the browser
 * ("__proto__" and "constructor" are valid labels): counted in a Map, since indexing a plain object by them would
 * reach Object.prototype or Object and write the counts there (ASVS 15.3.6).
 */
function speakersInfo(turns: TranscriptTurn[]): Record<string, SpeakerInfo> {
  const info = new Map<string, SpeakerInfo>();
  for (const turn of turns) {
    let entry = info.get(turn.speaker);
    if (!entry) {
      entry = { total_segments: 0, total_duration: 0, first_appearance: turn.start };
      info.set(turn.speaker, entry);
    }
    entry.total_segments += 1;
    entry.total_duration = round(entry.total_duration + Math.max(0, turn.end - turn.start));
  }
  // Object.fromEntries defines own properties: a "__proto__" label is a key like any other.
  return Object.fromEntries(info);
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** Speaker label in the transcript's language: "Sprecher 1" / "Speaker 1". */
export function speakerLabel(language: string, speakerNumber: number) {
  return `${language.startsWith("en") ? "Speaker" : "Sprecher"} ${speakerNumber}`;
}

function formatted(turns: TranscriptTurn[], language: string) {
  return turns
    .map((turn) => `${speakerLabel(language, turn.speaker_number)}:\n${turn.paragraphs.map(joinWords).join("\n\n")}`)
    .join("\n\n");
}

/**
 * The formatted text as escaped markup: every word's text is HTML-escaped, and low and medium confidence
 * words are wrapped in `<mark class="confidence-low|medium">`. Nothing an engine returns can become markup.
 */
function highlighted(turns: TranscriptTurn[], language: string) {
  const word = (w: TranscriptWord) =>
    w.confidence_level === "high" || w.punctuation
      ? escapeHtml(w.text)
      : `<mark class="confidence-${w.confidence_level}">${escapeHtml(w.text)}</mark>`;
  const paragraph = (words: TranscriptWord[]) =>
    `<p>${words.map((w, i) => (w.punctuation || i === 0 ? word(w) : ` ${word(w)}`)).join("")}</p>`;
  return turns
    .map(
      (turn) =>
        `<section data-speaker="${turn.speaker_number}"><h3>${escapeHtml(speakerLabel(language, turn.speaker_number))}</h3>` +
        `${turn.paragraphs.map(paragraph).join("")}</section>`,
    )
    .join("");
}

export function buildTranscript(result: EngineResult, createdAt = new Date()): TranscriptDocument {
  const turns = buildTurns(result.words);
  const words = turns.flatMap((t) => t.paragraphs.flat());
  return {
    version: 1,
    engine: result.engine,
    language_code: result.language,
    audio_seconds: round(result.audioSeconds),
    created_at: createdAt.toISOString(),
    raw_transcript: joinWords(words),
    formatted_transcript: formatted(turns, result.language),
    highlighted_transcript: highlighted(turns, result.language),
    speakers_info: speakersInfo(turns),
    turns,
    word_count: words.filter((w) => !w.punctuation).length,
  };
}

/** True when the engine heard nothing worth a transcript (silence, noise, an empty model). */
export function isEmptyResult(result: EngineResult) {
  return !result.words.some((w) => !w.punctuation && /[\p{L}\p{N}]/u.test(w.text));
}
