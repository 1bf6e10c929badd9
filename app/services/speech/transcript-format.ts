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
  /** Set by the doctor's review (issue 24): the word was confirmed as heard, or corrected (its text is the fix). */
  reviewed?: "confirmed" | "corrected";
};

export type TranscriptTurn = {
  speaker: string;
  /** 1-based number of the speaker in order of first appearance (colour and label). */
  speaker_number: number;
  start: number;
  end: number;
  /** Each paragraph is a list of words; a new paragraph starts after every 6 sentences. */
  paragraphs: TranscriptWord[][];
  /**
   * The paragraphs' segment ids (transcription/segments.ts) once a paragraph was moved to another speaker and the
   * turns were split: the ids they had before, so links to a segment keep their target. Absent: "t<turn>p<paragraph>".
   */
  segment_ids?: string[];
};

/** The roles a doctor can give a speaker (issue 24), or a name of their own. */
export const SPEAKER_ROLES = ["doctor", "patient", "relative", "interpreter"] as const;
export type SpeakerRole = (typeof SPEAKER_ROLES)[number];
export type SpeakerName = { role: SpeakerRole | null; name: string | null };

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
  /** The names the doctor gave the speakers (issue 24), by speaker label; a speaker without one is "Sprecher n". */
  speaker_names?: Record<string, SpeakerName>;
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

const ROLE_LABELS: Record<"de" | "en", Record<SpeakerRole, string>> = {
  de: { doctor: "Ärztin/Arzt", patient: "Patient/in", relative: "Angehörige/r", interpreter: "Dolmetscher/in" },
  en: { doctor: "Doctor", patient: "Patient", relative: "Relative", interpreter: "Interpreter" },
};

/** A role's name in the transcript's language ("Ärztin/Arzt" / "Doctor"): what the letter prompt reads. */
export function roleLabel(language: string, role: SpeakerRole) {
  return ROLE_LABELS[language.startsWith("en") ? "en" : "de"][role];
}

type Labelled = { language_code: string; speaker_names?: Record<string, SpeakerName> };

/**
 * A turn's speaker as text shows it: the name the doctor typed, else the role they picked (in the transcript's
 * language), else "Sprecher n". The names are looked up as own keys: a "__proto__" label is a label like any other.
 */
export function speakerTitle(document: Labelled, turn: Pick<TranscriptTurn, "speaker" | "speaker_number">) {
  const names = document.speaker_names;
  const given = names && Object.hasOwn(names, turn.speaker) ? names[turn.speaker] : undefined;
  if (given?.name) return given.name;
  if (given?.role) return roleLabel(document.language_code, given.role);
  return speakerLabel(document.language_code, turn.speaker_number);
}

type Title = (turn: TranscriptTurn) => string;

function formatted(turns: TranscriptTurn[], title: Title) {
  return turns.map((turn) => `${title(turn)}:\n${turn.paragraphs.map(joinWords).join("\n\n")}`).join("\n\n");
}

/**
 * The formatted text as escaped markup: every word's text is HTML-escaped, and low and medium confidence
 * words are wrapped in `<mark class="confidence-low|medium">`. Nothing an engine returns can become markup.
 */
function highlighted(turns: TranscriptTurn[], title: Title) {
  const word = (w: TranscriptWord) =>
    w.confidence_level === "high" || w.punctuation || w.reviewed
      ? escapeHtml(w.text)
      : `<mark class="confidence-${w.confidence_level}">${escapeHtml(w.text)}</mark>`;
  const paragraph = (words: TranscriptWord[]) =>
    `<p>${words.map((w, i) => (w.punctuation || i === 0 ? word(w) : ` ${word(w)}`)).join("")}</p>`;
  return turns
    .map(
      (turn) =>
        `<section data-speaker="${turn.speaker_number}"><h3>${escapeHtml(title(turn))}</h3>` +
        `${turn.paragraphs.map(paragraph).join("")}</section>`,
    )
    .join("");
}

export function buildTranscript(result: EngineResult, createdAt = new Date()): TranscriptDocument {
  return withTexts({
    version: 1,
    engine: result.engine,
    language_code: result.language,
    audio_seconds: round(result.audioSeconds),
    created_at: createdAt.toISOString(),
    raw_transcript: "",
    formatted_transcript: "",
    highlighted_transcript: "",
    speakers_info: {},
    turns: buildTurns(result.words),
    word_count: 0,
  });
}

/**
 * The fields that follow from the turns and the speakers' names — the three texts, speakers_info, word_count — made
 * afresh: for a new transcript, and for a corrected one (transcription/corrections.ts), so a corrected word or a named
 * speaker reads the same in every text form.
 */
export function withTexts(document: TranscriptDocument): TranscriptDocument {
  const words = document.turns.flatMap((t) => t.paragraphs.flat());
  const title: Title = (turn) => speakerTitle(document, turn);
  return {
    ...document,
    raw_transcript: joinWords(words),
    formatted_transcript: formatted(document.turns, title),
    highlighted_transcript: highlighted(document.turns, title),
    speakers_info: speakersInfo(document.turns),
    word_count: words.filter((w) => !w.punctuation).length,
  };
}

/** True when the engine heard nothing worth a transcript (silence, noise, an empty model). */
export function isEmptyResult(result: EngineResult) {
  return !result.words.some((w) => !w.punctuation && /[\p{L}\p{N}]/u.test(w.text));
}
