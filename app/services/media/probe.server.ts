import { open, stat } from "node:fs/promises";

import {
  DECODER_DESCRIPTION,
  SAMPLE_RATE_RANGE,
  checkDecoder,
  probeAudioFile,
  type ProbeResult,
} from "./decode.server";
import { DEFAULT_FFMPEG_PATH, runProgram } from "./ffprobe.server";
import {
  EMPTY_FILE_MESSAGE,
  MAX_AUDIO_BYTES,
  notAudioTypeMessage,
  tooLargeMessage,
  tooLongMessage,
  unsupportedTypeMessage,
} from "./messages.server";
import { MediaProbeError } from "./probe-error.server";
import { SNIFF_BYTES, describeContent, sniffAudioType } from "./sniff.server";

// The server's own check of uploaded audio (SPEC §5 "Audio upload", §9; issue 4
// "Upload"). The browser checks the same limits, but only as a convenience: here
// the stored bytes decide — magic bytes first, so a PDF or HTML page never
// reaches a decoder, then a probe of the actual media inside this process
// (media/decode.server.ts: WAV in JavaScript, MP3 in WebAssembly; no ffprobe).
//
// The pieces live next door — magic bytes in media/sniff.server.ts, the probe in
// media/decode.server.ts, the message wording in media/messages.server.ts — and are re-exported
// here, so callers keep importing everything from this module.

export { SAMPLE_RATE_RANGE, probeAudioFile, type ProbeResult } from "./decode.server";
export { MediaProbeError, type ProbeErrorReason } from "./probe-error.server";
export {
  EMPTY_FILE_MESSAGE,
  MAX_AUDIO_BYTES,
  formatDuration,
  formatFileSize,
  notAudioTypeMessage,
  tooLargeMessage,
  tooLongMessage,
  unsupportedTypeMessage,
} from "./messages.server";
export { SNIFF_BYTES, sniffAudioType, type SniffedType } from "./sniff.server";

/** SPEC §5: the MIME types a client may declare. */
export const ACCEPTED_AUDIO_TYPES = ["audio/mpeg", "audio/wav", "audio/x-wav"] as const;
/** Issue 4: the duration cap's default, 4 hours. */
export const DEFAULT_MAX_DURATION_SECONDS = 4 * 60 * 60;

export type AudioRejection =
  | { code: "empty"; message: "Invalid audio data: Empty file" }
  | { code: "too_large"; message: string }
  | { code: "unsupported_type"; message: string }
  | { code: "unreadable"; message: string }
  | { code: "too_long"; message: string };

export type AudioValidation =
  { ok: true; probe: ProbeResult; sniffed: "mp3" | "wav" } | { ok: false; rejection: AudioRejection };

// ---------------------------------------------------------------------------
// Checks

function normalizeMime(type: string) {
  return type.split(";")[0].trim().toLowerCase();
}

function isAcceptedType(type: string) {
  return (ACCEPTED_AUDIO_TYPES as readonly string[]).includes(normalizeMime(type));
}

/**
 * The first-line checks of SPEC §5 on what a client declares, before any upload:
 * a type outside audio/* → 'Unsupported file type: {type}. Please upload MP3 or
 * WAV files.'; an audio type other than MP3/WAV → 'File type "{type}" is not
 * supported. Please upload only MP3, or WAV files.'; size 0 → 'Invalid audio
 * data: Empty file'; over 70 MB → 'File is too large ({size}). Maximum size is
 * 70 MB.'. Returns null when the declaration is acceptable.
 */
export function checkDeclaredAudio(args: { type: string; size: number }): AudioRejection | null {
  const mime = normalizeMime(args.type);
  if (!mime.startsWith("audio/")) return { code: "unsupported_type", message: notAudioTypeMessage(args.type) };
  if (!isAcceptedType(mime)) return { code: "unsupported_type", message: unsupportedTypeMessage(args.type) };
  if (!Number.isFinite(args.size) || args.size <= 0) return { code: "empty", message: EMPTY_FILE_MESSAGE };
  if (args.size > MAX_AUDIO_BYTES) return { code: "too_large", message: tooLargeMessage(args.size) };
  return null;
}

async function readHead(path: string, bytes: number) {
  const handle = await open(path, "r");
  try {
    const buffer = new Uint8Array(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * The server's full check of a stored upload, in this order:
 * 1. size: empty, then over `MAX_AUDIO_BYTES` (on the stored file, not a claim);
 * 2. magic bytes — anything that is not WAV/MP3 is rejected here and never reaches a decoder;
 * 3. the in-process probe of the container the magic bytes name: it must open as that container,
 *    hold audio that decodes at a sample rate within `SAMPLE_RATE_RANGE`, and have a duration > 0
 *    (otherwise "unreadable", with the unsupported-type message);
 * 4. the duration cap (`maxDurationSeconds`, default 4 h).
 *
 * `declaredType` (the client's MIME type) never decides anything; it only
 * names the type in a message when the content itself is not recognisable.
 * A decoder that cannot start throws `MediaProbeError("unavailable")` — a server
 * fault, so the caller answers 5xx rather than blaming the file. A missing `path`
 * throws the fs error.
 */
export async function validateAudioFile(
  path: string,
  options: { declaredType?: string; maxDurationSeconds?: number } = {},
): Promise<AudioValidation> {
  const info = await stat(path);
  if (!info.isFile()) throw new Error(`not a regular file: ${path}`);
  if (info.size === 0) return { ok: false, rejection: { code: "empty", message: EMPTY_FILE_MESSAGE } };
  if (info.size > MAX_AUDIO_BYTES) {
    return { ok: false, rejection: { code: "too_large", message: tooLargeMessage(info.size) } };
  }

  const head = await readHead(path, SNIFF_BYTES);
  const sniffed = sniffAudioType(head);
  const declared = options.declaredType?.trim() ?? "";
  if (!sniffed) {
    const type = describeContent(head) ?? (declared || "unknown");
    return { ok: false, rejection: { code: "unsupported_type", message: unsupportedTypeMessage(type) } };
  }

  const unreadable = (): AudioValidation => ({
    ok: false,
    rejection: {
      code: "unreadable",
      message: unsupportedTypeMessage(declared || (sniffed === "mp3" ? "audio/mpeg" : "audio/wav")),
    },
  });

  let probe: ProbeResult;
  try {
    probe = await probeAudioFile(path, sniffed);
  } catch (error) {
    if (error instanceof MediaProbeError && error.reason !== "unavailable") return unreadable();
    throw error;
  }
  const rate = probe.sampleRate ?? 0;
  if (rate < SAMPLE_RATE_RANGE.min || rate > SAMPLE_RATE_RANGE.max) return unreadable();

  const maxDuration = options.maxDurationSeconds ?? DEFAULT_MAX_DURATION_SECONDS;
  if (probe.durationSeconds > maxDuration) {
    return { ok: false, rejection: { code: "too_long", message: tooLongMessage(probe.durationSeconds, maxDuration) } };
  }
  return { ok: true, probe, sniffed };
}

// ---------------------------------------------------------------------------
// Health

/**
 * The "media_conversion" entry of the health check (admin/health.server.ts). Uploads are converted in this process:
 * the MP3 decoder's WebAssembly is started and a few samples resampled, so a broken install shows here rather
 * than on the first upload. The live path (app/services/live/save-audio.server.ts) still encodes and remuxes
 * with ffmpeg, so `ffmpeg -version` is asked too and named in the detail; without it live recordings lose
 * their server-side audio, which is an error worth seeing.
 */
export async function mediaConversionHealthCheck(
  options: { ffmpegPath?: string; timeoutMs?: number } = {},
): Promise<{ status: "healthy" | "error"; detail?: string }> {
  const inProcess = await inProcessDecoderCheck();
  const live = await ffmpegVersion(options.ffmpegPath ?? DEFAULT_FFMPEG_PATH, options.timeoutMs ?? 2_500);
  const healthy = inProcess === null && live.ok;
  const uploads = inProcess === null ? `uploads: ${DECODER_DESCRIPTION}` : `uploads: ${inProcess}`;
  return { status: healthy ? "healthy" : "error", detail: `${uploads}; live recordings: ${live.detail}` };
}

/** Null when the in-process decoder works, otherwise what failed. */
async function inProcessDecoderCheck(): Promise<string | null> {
  try {
    await checkDecoder();
    return null;
  } catch (error) {
    return `in-process decoder failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 200);
  }
}

async function ffmpegVersion(ffmpegPath: string, timeoutMs: number) {
  try {
    const run = await runProgram(ffmpegPath, ["-hide_banner", "-version"], timeoutMs);
    if (run.code !== 0) return { ok: false, detail: `ffmpeg -version exited with ${run.code}` };
    const version = /ffmpeg version (\S+)/.exec(run.stdout)?.[1];
    return { ok: true, detail: version ? `ffmpeg ${version}` : "ffmpeg" };
  } catch (error) {
    return { ok: false, detail: error instanceof MediaProbeError ? error.message : "ffmpeg check failed" };
  }
}
