// The live wire protocol (issue 7, ADR 0013), shared by the browser client and the server. Messages follow the
// Speechmatics realtime vocabulary (PROTOCOLS §2) whichever engine answers, so the client has one code path.
// Nothing here may import server code: the browser bundle includes this file.
//
// A live session is created first (POST /live/sessions → { id }). Then either transport carries it:
//
//   WebSocket  GET /live/ws?session=<id>   (same origin, session cookie; Origin checked)
//     C → S  text   StartRecognition      { message, audio_format: { type: "raw", encoding: "pcm_s16le",
//                                            sample_rate: 16000 }, transcription_config: { language } }
//     S → C  text   RecognitionStarted    { id, last_seq_no }  last_seq_no = buffers the server already holds
//                                          for this session (0 on a new one); the client (re)sends from
//                                          last_seq_no + 1 — frames carry no number, their order gives it
//     C → S  binary one 4096-sample buffer of 16-bit little-endian PCM (the last one may be shorter)
//     S → C  text   AudioAdded { seq_no }   once that buffer is stored (seq_no counts the session's buffers)
//     S → C  text   AddPartialTranscript (dictation only), AddTranscript, Warning, Info, Error
//     C → S  text   EndOfStream { last_seq_no }
//     S → C  text   … remaining AddTranscript, then EndOfTranscript; the client closes with 1000
//
//   HTTP (when the WebSocket does not connect within 5 s, or drops mid-session)
//     POST /live/sessions/<id>/start   body StartRecognition        → 200 RecognitionStarted
//     POST /live/sessions/<id>/audio?seq=<n>  body: k buffers of PCM (buffer n … n+k-1; all but the last
//                                      exactly 4096 samples)        → 200 AudioAdded { seq_no: n+k-1 }
//                                      Idempotent: a buffer the server already has is not stored twice.
//     POST /live/sessions/<id>/end     body EndOfStream             → 202
//     GET  /live/sessions/<id>/events  server-sent events; `id:` is the message's number, `data:` the JSON
//                                      message; Last-Event-ID (or ?after=) resumes after a given number.
//
// Results carry times in seconds from the start of the live session (not of one run), so a continued
// session keeps one time line. Each message the server publishes (except AudioAdded) has a number `n`
// that rises within the session; a client that switches transport passes the last `n` it saw.

export const LIVE_SAMPLE_RATE = 16_000;
export const LIVE_BUFFER_SAMPLES = 4096;
export const LIVE_BUFFER_BYTES = LIVE_BUFFER_SAMPLES * 2;
/** A transport that has not delivered RecognitionStarted by then is given up for the next one. */
export const LIVE_FALLBACK_MS = 5_000;
/** SPEC §9: 'WebSocket connection timeout' when no transport connects in this time. */
export const LIVE_CONNECT_TIMEOUT_MS = { recording: 15_000, dictation: 10_000 } as const;
/** SPEC §9: dictation stops by itself after this long without speech. */
export const DICTATION_SILENCE_STOP_MS = 60_000;
/** After EndOfStream the client waits at most max_delay + this for EndOfTranscript (ADR 0013). */
export const END_OF_TRANSCRIPT_GRACE_MS = 3_000;

export type LiveKind = "recording" | "dictation";
export type LiveLanguage = "de" | "en";

/** What each kind asks of the engine (issue 7): recordings wait longer for better finals and separate speakers. */
export const LIVE_SETTINGS: Record<LiveKind, { maxDelay: number; partials: boolean; diarization: boolean }> = {
  recording: { maxDelay: 3, partials: false, diarization: true },
  dictation: { maxDelay: 1, partials: true, diarization: false },
};

export type LiveAlternative = { content: string; confidence: number; speaker?: string };
export type LiveResult = {
  type: "word" | "punctuation";
  start_time: number;
  end_time: number;
  is_eos?: boolean;
  attaches_to?: "previous" | "next" | "both" | "none";
  alternatives: LiveAlternative[];
};

export type TranscriptMessage = {
  message: "AddTranscript" | "AddPartialTranscript";
  metadata: { start_time: number; end_time: number; transcript: string };
  results: LiveResult[];
};
export type NoticeMessage = { message: "Warning" | "Error" | "Info"; type: string; reason: string };

/**
 * Skribent's own notice types (issue 21). TRANSCRIBE_LATER, a Warning: this run recognises nothing now (the
 * embedded engine's models are still downloading); the session's audio is kept, and saving it queues the
 * recording for transcription. MODELS_LOADING, an Error: a dictation, whose text is wanted now, cannot start yet.
 */
export const TRANSCRIBE_LATER = "transcribe_later";
export const MODELS_LOADING = "models_loading";

export type ServerMessage =
  | { message: "RecognitionStarted"; id: string; last_seq_no: number }
  | { message: "AudioAdded"; seq_no: number }
  | TranscriptMessage
  | NoticeMessage
  | { message: "EndOfTranscript" };

/** A published message with its number in the session (SSE `id:`, and on the WebSocket as `n`). */
export type NumberedMessage = ServerMessage & { n?: number };

export type StartRecognition = {
  message: "StartRecognition";
  audio_format: { type: "raw"; encoding: "pcm_s16le"; sample_rate: number };
  transcription_config: { language: LiveLanguage };
  /** Skribent extension: the last message number the client saw, so a switched transport does not replay. */
  last_n?: number;
};
export type EndOfStream = { message: "EndOfStream"; last_seq_no: number };
export type ClientMessage = StartRecognition | EndOfStream;

/**
 * The reason of a `not_authorised` Error when the clinician's own sign-in has ended (logged out, ended from
 * Settings › Aktive Sitzungen, or past its absolute limit) — as opposed to the engine refusing its key.
 */
export const SIGNED_OUT_REASON = "signed_out";

/** Error types the Skribent endpoint itself sends (besides the engine's own, passed through). */
export const LIVE_ERROR_TYPES = [
  "not_authorised",
  "protocol_error",
  "invalid_audio_type",
  "invalid_language",
  "not_found",
  "engine_unavailable",
  "job_error",
  "session_timeout",
  "unknown_error",
] as const;
