import type { RawData } from "ws";
import { z } from "zod";

import { LIVE_SAMPLE_RATE, LIVE_SETTINGS, type LiveResult } from "~/live/protocol";
import { speechmaticsVocabulary } from "../../speech/speechmatics-format.server";
import { LiveEngineError, type LiveRunOptions } from "../engine-types";

// What the Speechmatics realtime engine (speechmatics-rt.server.ts) sends and how it reads what comes back
// (PROTOCOLS.md §2): StartRecognition, the server's messages checked with zod, the meaning of close codes and
// handshake refusals.

/** What a close code means when the close payload names no error type (PROTOCOLS.md §2 close codes). */
const CLOSE_TYPES: Record<number, string> = {
  1003: "protocol_error",
  1008: "policy_violation",
  1011: "internal_error",
  4001: "not_authorised",
  4003: "not_allowed",
  4004: "invalid_model",
  4005: "quota_exceeded",
  4006: "timelimit_exceeded",
  4013: "job_error",
};
/** Speechmatics advises retrying (after 5–10 s) only these; a lost connection is worth a retry too. */
export const TRANSIENT_TYPES = new Set([
  "quota_exceeded",
  "job_error",
  "internal_error",
  "engine_unavailable",
  "connection_lost",
]);

const alternativeSchema = z.object({ content: z.string(), confidence: z.number(), speaker: z.string().optional() });
const resultSchema = z.object({
  type: z.string(),
  start_time: z.number(),
  end_time: z.number(),
  is_eos: z.boolean().optional(),
  attaches_to: z.enum(["previous", "next", "both", "none"]).optional(),
  alternatives: z.array(alternativeSchema).optional(),
});
const serverMessageSchema = z.discriminatedUnion("message", [
  z.object({ message: z.literal("RecognitionStarted") }),
  z.object({ message: z.literal("AudioAdded"), seq_no: z.number().int() }),
  z.object({
    message: z.enum(["AddTranscript", "AddPartialTranscript"]),
    metadata: z.object({ start_time: z.number(), end_time: z.number(), transcript: z.string() }),
    results: z.array(resultSchema),
  }),
  z.object({ message: z.enum(["Warning", "Error", "Info"]), type: z.string(), reason: z.string().default("") }),
  z.object({ message: z.literal("EndOfTranscript") }),
]);
export type ServerMessage = z.infer<typeof serverMessageSchema>;

/** Words and punctuation only (we never ask for entities), each with the fields the app reads. */
export function liveResults(results: z.infer<typeof resultSchema>[]): LiveResult[] {
  return results.flatMap((r) => {
    if ((r.type !== "word" && r.type !== "punctuation") || !r.alternatives?.length) return [];
    const alternatives = r.alternatives.map(({ content, confidence, speaker }) =>
      speaker === undefined ? { content, confidence } : { content, confidence, speaker },
    );
    return [
      {
        type: r.type,
        start_time: r.start_time,
        end_time: r.end_time,
        ...(r.is_eos !== undefined ? { is_eos: r.is_eos } : {}),
        ...(r.attaches_to !== undefined ? { attaches_to: r.attaches_to } : {}),
        alternatives,
      },
    ];
  });
}

/** A message from the server, or null when it is unreadable or of a kind the engine ignores. */
export function parseServerMessage(data: RawData): ServerMessage | null {
  const text = Buffer.isBuffer(data)
    ? data.toString("utf8")
    : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString("utf8");
  try {
    const parsed = serverMessageSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The error for a handshake refused with an HTTP status. */
export function handshakeError(status: number | undefined, host: string): LiveEngineError {
  if (status === 401 || status === 403)
    return new LiveEngineError("not_authorised", `Speechmatics rejected the API key (HTTP ${status}) at ${host}`);
  if (status === 429)
    return new LiveEngineError("quota_exceeded", `Speechmatics refused the session (HTTP 429) at ${host}`, {
      transient: true,
    });
  const transient = status === undefined || status >= 500;
  return new LiveEngineError(
    "engine_unavailable",
    `Speechmatics answered the handshake with HTTP ${status} at ${host}`,
    {
      transient,
    },
  );
}

/** The error type a close means: the payload when it names one, else the code's, else connection_lost. */
export function closeType(code: number, reason: string) {
  return /^[a-z_]{3,40}$/.test(reason) ? reason : (CLOSE_TYPES[code] ?? "connection_lost");
}

/** StartRecognition for a run: 16 kHz 16-bit PCM, and what LIVE_SETTINGS asks of the run's kind. */
export function startRecognition(options: Pick<LiveRunOptions, "kind" | "language" | "vocabulary">) {
  const settings = LIVE_SETTINGS[options.kind];
  const vocabulary = speechmaticsVocabulary(options.vocabulary);
  return {
    message: "StartRecognition",
    audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: LIVE_SAMPLE_RATE },
    transcription_config: {
      language: options.language,
      operating_point: "enhanced",
      max_delay: settings.maxDelay,
      enable_partials: settings.partials,
      diarization: settings.diarization ? "speaker" : "none",
      ...(vocabulary.length > 0 ? { additional_vocab: vocabulary } : {}),
    },
  };
}
