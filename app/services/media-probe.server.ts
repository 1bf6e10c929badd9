import { open, stat } from "node:fs/promises";

import {
  DEFAULT_FFPROBE_PATH,
  MediaProbeError,
  probeAudioFile,
  runProgram,
  type ProbeResult,
} from "./media-ffprobe.server";
import {
  EMPTY_FILE_MESSAGE,
  MAX_AUDIO_BYTES,
  notAudioTypeMessage,
  tooLargeMessage,
  tooLongMessage,
  unsupportedTypeMessage,
} from "./media-messages.server";
import { SNIFF_BYTES, describeContent, sniffAudioType } from "./media-sniff.server";

// The server's own check of uploaded audio (SPEC §5 "Audio upload", §9; issue 4
// "Upload"). The browser checks the same limits, but only as a convenience: here
// the stored bytes decide — magic bytes first, so a PDF or HTML page never
// reaches ffprobe, then a probe of the actual media with ffprobe (Debian's
// ffmpeg package, ARCHITECTURE.md "media").
//
// The pieces live next door — magic bytes in media-sniff.server.ts, the ffprobe runner in
// media-ffprobe.server.ts, the message wording in media-messages.server.ts — and are re-exported
// here, so callers keep importing everything from this module.

export {
  DEFAULT_FFPROBE_PATH,
  DEFAULT_PROBE_TIMEOUT_MS,
  MediaProbeError,
  probeAudioFile,
  type ProbeErrorReason,
  type ProbeResult,
} from "./media-ffprobe.server";
export {
  EMPTY_FILE_MESSAGE,
  MAX_AUDIO_BYTES,
  formatDuration,
  formatFileSize,
  notAudioTypeMessage,
  tooLargeMessage,
  tooLongMessage,
  unsupportedTypeMessage,
} from "./media-messages.server";
export { SNIFF_BYTES, sniffAudioType, type SniffedType } from "./media-sniff.server";

/** SPEC §5: the MIME types a client may declare. */
export const ACCEPTED_AUDIO_TYPES = ["audio/mpeg", "audio/wav", "audio/x-wav"] as const;
/** Issue 4: the duration cap's default, 4 hours. */
export const DEFAULT_MAX_DURATION_SECONDS = 4 * 60 * 60;
/**
 * The sample rates a recording may have: telephone speech (8 kHz, also MP3's lowest) up to 384 kHz. A WAV header
 * may claim any rate; at 4 Hz, 64 KB "last" over two hours and would be resampled into ~256 MB of PCM.
 */
export const SAMPLE_RATE_RANGE = { min: 8_000, max: 384_000 } as const;

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
 * 2. magic bytes — anything that is not WAV/MP3 is rejected here and never reaches ffprobe;
 * 3. ffprobe: the container must agree with the magic bytes, hold an audio stream that
 *    decodes at a sample rate within `SAMPLE_RATE_RANGE`, and have a duration > 0 (otherwise
 *    "unreadable", with the unsupported-type message);
 * 4. the duration cap (`maxDurationSeconds`, default 4 h).
 *
 * `declaredType` (the client's MIME type) never decides anything; it only
 * names the type in a message when the content itself is not recognisable.
 * A probe time-out counts as unreadable; ffprobe missing throws
 * `MediaProbeError("unavailable")` — a server fault, so the caller answers 5xx
 * rather than blaming the file. A missing `path` throws the fs error.
 */
export async function validateAudioFile(
  path: string,
  options: { declaredType?: string; maxDurationSeconds?: number; ffprobePath?: string; timeoutMs?: number } = {},
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
    probe = await probeAudioFile(path, { ffprobePath: options.ffprobePath, timeoutMs: options.timeoutMs });
  } catch (error) {
    if (error instanceof MediaProbeError && error.reason !== "unavailable") return unreadable();
    throw error;
  }
  if (probe.format !== sniffed) return unreadable();
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

/** `ffprobe -version` answers within the time-out (default 3 s). */
export async function ffprobeAvailable(ffprobePath: string = DEFAULT_FFPROBE_PATH, timeoutMs = 3_000) {
  try {
    const run = await runProgram(ffprobePath, ["-hide_banner", "-version"], timeoutMs);
    return run.code === 0;
  } catch {
    return false;
  }
}

/**
 * The "media_conversion" entry of the health check, in the shape
 * `registerHealthCheck` (health.server.ts) expects:
 * `registerHealthCheck("media_conversion", () => mediaConversionHealthCheck(path))`.
 */
export async function mediaConversionHealthCheck(
  ffprobePath: string = DEFAULT_FFPROBE_PATH,
  timeoutMs = 2_500,
): Promise<{ status: "healthy" | "error"; detail?: string }> {
  try {
    const run = await runProgram(ffprobePath, ["-hide_banner", "-version"], timeoutMs);
    if (run.code !== 0) return { status: "error", detail: `ffprobe -version exited with ${run.code}` };
    const version = /ffprobe version (\S+)/.exec(run.stdout)?.[1];
    return { status: "healthy", detail: version ? `ffprobe ${version}` : "ffprobe" };
  } catch (error) {
    return { status: "error", detail: error instanceof MediaProbeError ? error.message : "ffprobe check failed" };
  }
}
