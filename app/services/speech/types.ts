// The speech interface (issue 5): every engine — Speechmatics batch, an OpenAI-compatible transcription
// server, the embedded local engine — takes a normalised 16 kHz mono WAV and returns words with times,
// confidence and speaker. Turning those words into SPEC §3's transcript (speakers_info, paragraphs,
// confidence levels) is the job of `transcript-format.ts`, the same for every engine.

/** One recognised token. Punctuation marks are tokens of their own with `punctuation: true`. */
export type EngineWord = {
  text: string;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  /** 0..1; engines without a per-word figure give their best estimate (documented per engine). */
  confidence: number;
  /** The engine's label ("S1", "S2", …); null when the engine does not separate speakers. */
  speaker: string | null;
  /** A punctuation mark that attaches to the word before it. */
  punctuation?: boolean;
  /** Ends a sentence (".", "?", "!"), when the engine says so. */
  endOfSentence?: boolean;
};

export type EngineResult = {
  engine: EngineName;
  /** ISO 639-1 code of the language the engine transcribed ("de", "en"). */
  language: string;
  /** Length of the audio the engine processed, in seconds (what usage is billed on). */
  audioSeconds: number;
  words: EngineWord[];
};

/** A custom-vocabulary entry, as Speechmatics' additional_vocab has it. */
export type VocabularyEntry = { content: string; sounds_like?: string[] };

export type SpeechRequest = {
  /** Path of a 16 kHz mono 16-bit PCM WAV made by ffmpeg. */
  file: string;
  language: "de" | "en";
  durationSeconds: number;
  vocabulary: VocabularyEntry[];
  /** Aborts the whole call (job cancelled, worker shutting down). */
  signal?: AbortSignal;
};

export type EngineName = "speechmatics" | "openai" | "local";

export type EngineHealth = { status: "healthy" | "error" | "not_configured"; detail?: string };

export interface SpeechEngine {
  readonly name: EngineName;
  transcribe(request: SpeechRequest): Promise<EngineResult>;
  /** A live check with a time-out, for /api/health; never throws. */
  check(timeoutMs?: number): Promise<EngineHealth>;
}

/**
 * - transient: worth retrying (network, time-out, 5xx, 429 that is not a quota);
 * - permanent: retrying cannot help (4xx, undecodable audio, rejected job, quota exhausted);
 * - not_configured: the operator must act (missing model files, missing API key).
 * `message` is for logs and the operator; `userMessageKey` (i18n key) is what a clinician sees.
 */
export type SpeechErrorKind = "transient" | "permanent" | "not_configured";

export class SpeechEngineError extends Error {
  constructor(
    readonly kind: SpeechErrorKind,
    message: string,
    readonly options: { status?: number; userMessageKey?: string; cause?: unknown } = {},
  ) {
    super(message);
    this.name = "SpeechEngineError";
  }
}
