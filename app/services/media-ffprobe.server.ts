import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { childEnv } from "./child-env.server";
import { MediaProbeError } from "./media-probe-error.server";

// ffprobe (Debian's ffmpeg package, ARCHITECTURE.md "media"): running it without a shell under a
// time-out, and probing one file for the audio checks of media-probe.server.ts.

export const DEFAULT_FFPROBE_PATH = "ffprobe";
export const DEFAULT_PROBE_TIMEOUT_MS = 15_000;

// Seconds of audio ffprobe decodes to prove the bytes are audio and not just a
// plausible header (see `probeAudioFile`).
const DECODE_CHECK_SECONDS = 30;
const MAX_STDOUT_BYTES = 4 * 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;

export type ProbeResult = {
  format: "mp3" | "wav";
  durationSeconds: number;
  sampleRate: number | null;
  channels: number | null;
  codec: string;
};

export { MediaProbeError, type ProbeErrorReason } from "./media-probe-error.server";

type RunResult = { code: number | null; stdout: string; stderr: string };

/**
 * Runs a program without a shell, kills it (SIGKILL) when `timeoutMs` passes,
 * and settles only once it has exited, so no child outlives the call.
 */
export function runProgram(program: string, args: string[], timeoutMs: number): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    let child;
    try {
      child = spawn(program, args, {
        shell: false,
        stdio: ["ignore", "pipe", "pipe"],
        windowsHide: true,
        env: childEnv(),
      });
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
