import type { RecognizerConfig } from "./fake-speechmatics-rt-recognition";

// StartRecognition as the fake Speechmatics realtime server (fake-speechmatics-rt.ts) checks it, and the close
// code each Error type ends the session with (PROTOCOLS.md §2). The close-code table names only some types;
// the rest of the refusals of a bad message (invalid_message, invalid_config, invalid_language,
// invalid_audio_type) close with 1003, the code it gives protocol errors — which code the real service uses
// for those is UNCONFIRMED.

const CLOSE_CODES: Record<string, number> = {
  protocol_error: 1003,
  invalid_message: 1003,
  invalid_config: 1003,
  invalid_language: 1003,
  invalid_audio_type: 1003,
  idle_timeout: 1008,
  session_timeout: 1008,
  internal_error: 1011,
  unknown_error: 1011,
  not_authorised: 4001,
  not_allowed: 4003,
  invalid_model: 4004,
  quota_exceeded: 4005,
  timelimit_exceeded: 4006,
  job_error: 4013,
};

export function closeCodeOf(type: string): number {
  return CLOSE_CODES[type] ?? 1011;
}

const ENCODINGS = new Set(["pcm_s16le", "pcm_f32le"]);
const MODELS = new Set(["standard", "enhanced", "melia-1"]);
const DIARIZATION = new Set(["none", "speaker", "channel", "channel_and_speaker"]);

type StartConfig = Omit<RecognizerConfig, "script" | "voiceThreshold">;
type Refusal = { type: string; reason: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function validVocabulary(vocab: unknown) {
  return (
    Array.isArray(vocab) &&
    vocab.every(
      (entry) =>
        (typeof entry === "string" && entry.length > 0) ||
        (isRecord(entry) &&
          typeof entry.content === "string" &&
          entry.content.length > 0 &&
          (entry.sounds_like === undefined ||
            (Array.isArray(entry.sounds_like) && entry.sounds_like.every((s) => typeof s === "string")))),
    )
  );
}

/**
 * The recognizer's settings from a StartRecognition, or why it is refused. `path` is the upgrade's path: a
 * language in it (/v2/de, as the python SDK sends) must match transcription_config.language.
 */
export function parseStart(
  message: Record<string, unknown>,
  path: string,
  languages: string[],
): { config: StartConfig } | { refusal: Refusal } {
  const refuse = (type: string, reason: string) => ({ refusal: { type, reason } });
  const format = message.audio_format;
  const config = message.transcription_config;
  if (!isRecord(format) || !isRecord(config))
    return refuse("invalid_message", "StartRecognition needs audio_format and transcription_config");
  if (format.type !== "raw")
    return refuse("invalid_audio_type", `Unsupported audio_format type ${String(format.type)}`);
  if (typeof format.encoding !== "string" || !ENCODINGS.has(format.encoding))
    return refuse("invalid_audio_type", `Unsupported encoding ${String(format.encoding)}`);
  const rate = format.sample_rate;
  if (typeof rate !== "number" || !Number.isInteger(rate) || rate < 8_000 || rate > 96_000)
    return refuse("invalid_audio_type", `Unsupported sample_rate ${String(rate)}`);
  const language = config.language;
  if (typeof language !== "string" || !languages.includes(language))
    return refuse("invalid_language", `Language ${String(language)} is not supported`);
  const inPath = /^\/v2\/([a-z]{2,3})\/?$/.exec(path)?.[1];
  if (inPath !== undefined && inPath !== language)
    return refuse("invalid_language", `Language ${language} does not match the URL's ${inPath}`);
  for (const key of ["model", "operating_point"]) {
    if (config[key] !== undefined && !MODELS.has(String(config[key])))
      return refuse("invalid_model", `Unsupported ${key} ${String(config[key])}`);
  }
  const maxDelay = config.max_delay ?? 4;
  if (typeof maxDelay !== "number" || maxDelay < 0.7 || maxDelay > 4)
    return refuse("invalid_config", "max_delay must be between 0.7 and 4");
  if (config.enable_partials !== undefined && typeof config.enable_partials !== "boolean")
    return refuse("invalid_config", "enable_partials must be a boolean");
  const diarization = config.diarization ?? "none";
  if (typeof diarization !== "string" || !DIARIZATION.has(diarization))
    return refuse("invalid_config", `Unsupported diarization ${String(diarization)}`);
  if (config.additional_vocab !== undefined && !validVocabulary(config.additional_vocab))
    return refuse("invalid_config", "additional_vocab must hold strings or {content, sounds_like}");
  return {
    config: {
      encoding: format.encoding as StartConfig["encoding"],
      sampleRate: rate,
      maxDelay,
      partials: config.enable_partials === true,
      diarization: diarization !== "none",
      language,
    },
  };
}
