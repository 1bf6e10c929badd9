import { spawn } from "node:child_process";
import { open, stat } from "node:fs/promises";
import { resolve } from "node:path";

// The server's own check of uploaded audio (SPEC §5 "Audio upload", §9; issue 4
// "Upload"). The browser checks the same limits, but only as a convenience: here
// the stored bytes decide — magic bytes first, so a PDF or HTML page never
// reaches ffprobe, then a probe of the actual media with ffprobe (Debian's
// ffmpeg package, ARCHITECTURE.md "media").

/** SPEC §9: 70 MB. */
export const MAX_AUDIO_BYTES = 73_400_320;
/** SPEC §5: the MIME types a client may declare. */
export const ACCEPTED_AUDIO_TYPES = ["audio/mpeg", "audio/wav", "audio/x-wav"] as const;
/** Issue 4: the duration cap's default, 4 hours. */
export const DEFAULT_MAX_DURATION_SECONDS = 4 * 60 * 60;
export const DEFAULT_FFPROBE_PATH = "ffprobe";
export const DEFAULT_PROBE_TIMEOUT_MS = 15_000;
/** How many leading bytes `validateAudioFile` reads for `sniffAudioType`. */
export const SNIFF_BYTES = 64;

// Seconds of audio ffprobe decodes to prove the bytes are audio and not just a
// plausible header (see `probeAudioFile`).
const DECODE_CHECK_SECONDS = 30;
const MAX_STDOUT_BYTES = 4 * 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;
const BYTES_PER_MB = 1024 * 1024;

export type SniffedType = "mp3" | "wav" | null;

export type ProbeResult = {
  format: "mp3" | "wav";
  durationSeconds: number;
  sampleRate: number | null;
  channels: number | null;
  codec: string;
};

export type AudioRejection =
  | { code: "empty"; message: "Invalid audio data: Empty file" }
  | { code: "too_large"; message: string }
  | { code: "unsupported_type"; message: string }
  | { code: "unreadable"; message: string }
  | { code: "too_long"; message: string };

export type AudioValidation =
  { ok: true; probe: ProbeResult; sniffed: "mp3" | "wav" } | { ok: false; rejection: AudioRejection };

export type ProbeErrorReason =
  /** ffprobe could not be started (missing binary, no permission): a server fault, not the file's. */
  | "unavailable"
  /** ffprobe ran longer than the time-out and was killed. */
  | "timeout"
  /** ffprobe exited non-zero: the bytes are not media it can open. */
  | "failed"
  /** ffprobe's output was not the JSON expected (or was too large). */
  | "invalid_output"
  /** The media opened but is not usable audio: no audio stream, no duration, nothing decodable. */
  | "not_audio";

export class MediaProbeError extends Error {
  constructor(
    readonly reason: ProbeErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "MediaProbeError";
  }
}

// ---------------------------------------------------------------------------
// Messages (exact SPEC §5 wording)

export const EMPTY_FILE_MESSAGE = "Invalid audio data: Empty file" as const;

export function tooLargeMessage(size: number) {
  return `File is too large (${formatFileSize(size)}). Maximum size is ${formatFileSize(MAX_AUDIO_BYTES)}.`;
}

export function unsupportedTypeMessage(type: string) {
  return `File type "${type || "unknown"}" is not supported. Please upload only MP3, or WAV files.`;
}

export function notAudioTypeMessage(type: string) {
  return `Unsupported file type: ${type || "unknown"}. Please upload MP3 or WAV files.`;
}

/**
 * Durations in messages: H:MM:SS, the recording rounded to the nearest second
 * but always shown at least one second above the (whole-second) maximum, so
 * 3.03 s over a 2 s cap reads "0:00:03" and 4:00:00.4 over 4 h reads "4:00:01".
 */
export function tooLongMessage(durationSeconds: number, maxSeconds: number) {
  const max = Math.floor(maxSeconds);
  const shown = Math.max(Math.round(durationSeconds), max + 1);
  return `Recording is too long (${formatDuration(shown)}). Maximum length is ${formatDuration(max)}.`;
}

/**
 * Sizes in messages: binary megabytes (1 MB = 1,048,576 bytes) with one decimal,
 * rounded UP, and a trailing ".0" dropped — 73,400,320 → "70 MB", 73,400,321 →
 * "70.1 MB", 75,000,000 → "71.6 MB". Rounding up means a file over the limit can
 * never be shown as the limit itself.
 */
export function formatFileSize(bytes: number) {
  // bytes * 10 / 2^20 is exact in floating point, so the ceiling is too.
  const tenths = Math.ceil((Math.max(0, bytes) * 10) / BYTES_PER_MB);
  const whole = Math.floor(tenths / 10);
  const decimal = tenths % 10;
  return decimal === 0 ? `${whole} MB` : `${whole}.${decimal} MB`;
}

/** Whole seconds as H:MM:SS ("4:00:00", "0:00:03"). */
export function formatDuration(totalSeconds: number) {
  const s = Math.max(0, Math.floor(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  return `${hours}:${String(minutes).padStart(2, "0")}:${String(seconds).padStart(2, "0")}`;
}

// ---------------------------------------------------------------------------
// Magic bytes

function ascii(head: Uint8Array, offset: number, text: string) {
  if (head.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) if (head[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * An ID3v2 header: "ID3", major version 2–4, a revision byte, flags, and a
 * four-byte "syncsafe" size whose bytes all have the top bit clear.
 */
function isId3v2(head: Uint8Array) {
  if (!ascii(head, 0, "ID3") || head.length < 10) return false;
  if (head[3] < 2 || head[3] > 4 || head[4] === 0xff) return false;
  return head[6] < 0x80 && head[7] < 0x80 && head[8] < 0x80 && head[9] < 0x80;
}

/**
 * An MPEG audio layer III frame header at offset 0: 11-bit frame sync, a
 * version other than "reserved" (MPEG 1, 2 or 2.5), layer III, a bitrate index
 * other than "bad" (1111) and a sample-rate index other than "reserved" (11).
 * This excludes AAC/ADTS (layer 00) and MP1/MP2 as well as stray 0xFF bytes.
 */
function isMpegLayer3Frame(head: Uint8Array) {
  if (head.length < 4 || head[0] !== 0xff || (head[1] & 0xe0) !== 0xe0) return false;
  const version = (head[1] >> 3) & 0b11;
  const layer = (head[1] >> 1) & 0b11;
  const bitrateIndex = head[2] >> 4;
  const sampleRateIndex = (head[2] >> 2) & 0b11;
  return version !== 0b01 && layer === 0b01 && bitrateIndex !== 0b1111 && sampleRateIndex !== 0b11;
}

/**
 * Magic bytes only (the first ≤ 64 bytes; only offset 0 is looked at).
 * WAV: "RIFF" <size> "WAVE". MP3: an ID3v2 tag, or an MPEG layer III frame header.
 * Anything else — "%PDF", "<!DOCTYPE"/"<html", zip, text, leading junk — is null.
 */
export function sniffAudioType(head: Uint8Array): SniffedType {
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "WAVE")) return "wav";
  if (isId3v2(head) || isMpegLayer3Frame(head)) return "mp3";
  return null;
}

/** What a non-audio file most likely is, for the rejection message only. */
function describeContent(head: Uint8Array): string | null {
  const text = new TextDecoder("latin1").decode(head.subarray(0, SNIFF_BYTES)).trimStart().toLowerCase();
  if (text.startsWith("%pdf")) return "application/pdf";
  if (text.startsWith("<!doctype html") || text.startsWith("<html")) return "text/html";
  if (text.startsWith("<?xml") || text.startsWith("<svg")) return "application/xml";
  if (text.startsWith("pk\u0003\u0004")) return "application/zip";
  if (text.startsWith("oggs")) return "audio/ogg";
  if (text.startsWith("flac")) return "audio/flac";
  if (ascii(head, 4, "ftyp")) return "video/mp4";
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return "video/webm";
  return null;
}

// ---------------------------------------------------------------------------
// ffprobe

type RunResult = { code: number | null; stdout: string; stderr: string };

/**
 * Runs a program without a shell, kills it (SIGKILL) when `timeoutMs` passes,
 * and settles only once it has exited, so no child outlives the call.
 */
function runProgram(program: string, args: string[], timeoutMs: number): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    let child;
    try {
      child = spawn(program, args, { shell: false, stdio: ["ignore", "pipe", "pipe"], windowsHide: true });
    } catch (error) {
      reject(new MediaProbeError("unavailable", `cannot start ${program}: ${(error as Error).message}`));
      return;
    }
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let failure: MediaProbeError | null = null;
    let settled = false;

    const stop = (error: MediaProbeError) => {
      failure ??= error;
      child.kill("SIGKILL");
      // A grandchild holding the pipes open must not keep us waiting.
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(() => stop(new MediaProbeError("timeout", `no answer within ${timeoutMs} ms`)), timeoutMs);

    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_STDOUT_BYTES) stop(new MediaProbeError("invalid_output", "output too large"));
      else stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderrBytes < MAX_STDERR_BYTES) stderr.push(chunk);
      stderrBytes += chunk.length;
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new MediaProbeError("unavailable", `cannot start ${program}: ${error.code ?? error.message}`));
    });
    child.on("close", (code) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (failure) reject(failure);
      else
        resolvePromise({
          code,
          stdout: Buffer.concat(stdout).toString("utf8"),
          stderr: Buffer.concat(stderr).toString("utf8").slice(0, MAX_STDERR_BYTES),
        });
    });
  });
}

type FfprobeStream = {
  codec_type?: string;
  codec_name?: string;
  sample_rate?: string;
  channels?: number;
  duration?: string;
  nb_read_frames?: string;
  nb_read_packets?: string;
};
type FfprobeOutput = { format?: { format_name?: string; duration?: string }; streams?: FfprobeStream[] };

function positiveNumber(value: unknown): number | null {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : NaN;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/**
 * Probes one file with ffprobe: `-v error -protocol_whitelist file -print_format
 * json -show_format -show_streams`, plus `-count_frames -count_packets` over the first 30 s so
 * the audio is actually decoded (a valid-looking MPEG header followed by noise is
 * reported by ffprobe as a perfectly good MP3 otherwise). The only user-influenced
 * argument is the file, given as `file:` + absolute path so it cannot be read as
 * an option or another protocol. Throws `MediaProbeError`.
 */
export async function probeAudioFile(
  path: string,
  options: { ffprobePath?: string; timeoutMs?: number } = {},
): Promise<ProbeResult> {
  const args = [
    "-hide_banner",
    "-v",
    "error",
    "-protocol_whitelist",
    "file",
    "-print_format",
    "json",
    "-show_format",
    "-show_streams",
    "-count_frames",
    "-count_packets",
    "-read_intervals",
    `%+${DECODE_CHECK_SECONDS}`,
    `file:${resolve(path)}`,
  ];
  const run = await runProgram(
    options.ffprobePath ?? DEFAULT_FFPROBE_PATH,
    args,
    options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
  );
  if (run.code !== 0) {
    const lastLine = run.stderr.trim().split("\n").at(-1)?.slice(0, 200) ?? "";
    throw new MediaProbeError("failed", `ffprobe exited with ${run.code}${lastLine ? `: ${lastLine}` : ""}`);
  }

  let output: FfprobeOutput;
  try {
    output = JSON.parse(run.stdout) as FfprobeOutput;
  } catch {
    throw new MediaProbeError("invalid_output", "ffprobe printed no JSON");
  }
  if (!output || typeof output !== "object" || !output.format) {
    throw new MediaProbeError("invalid_output", "ffprobe printed no format");
  }

  const formats = (output.format.format_name ?? "").split(",");
  const format = formats.includes("wav") ? "wav" : formats.includes("mp3") ? "mp3" : null;
  if (!format) throw new MediaProbeError("not_audio", `container "${output.format.format_name}" is not MP3 or WAV`);

  const audio = (output.streams ?? []).find((s) => s.codec_type === "audio");
  if (!audio || !audio.codec_name) throw new MediaProbeError("not_audio", "no audio stream");
  if (format === "mp3" && audio.codec_name !== "mp3") {
    throw new MediaProbeError("not_audio", `codec "${audio.codec_name}" in an MP3 container`);
  }

  // Decoded frames versus demuxed packets in the first seconds: real audio
  // decodes (nearly) every packet, noise behind a frame header decodes none.
  const decoded = positiveNumber(audio.nb_read_frames) ?? 0;
  const packets = positiveNumber(audio.nb_read_packets) ?? 0;
  if (decoded === 0 || decoded * 2 < packets) {
    throw new MediaProbeError("not_audio", `decoded ${decoded} of ${packets} packets`);
  }

  const durationSeconds = positiveNumber(output.format.duration) ?? positiveNumber(audio.duration);
  if (durationSeconds === null) throw new MediaProbeError("not_audio", "no duration");

  return {
    format,
    durationSeconds,
    sampleRate: positiveNumber(audio.sample_rate),
    channels: positiveNumber(audio.channels),
    codec: audio.codec_name,
  };
}

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
 *    decodes, and have a duration > 0 (otherwise "unreadable", with the unsupported-type message);
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
