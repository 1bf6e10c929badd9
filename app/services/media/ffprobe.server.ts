import { spawn } from "node:child_process";
import { childEnv } from "../config/child-env.server";
import { MediaProbeError } from "./probe-error.server";

// Running ffprobe and ffmpeg (Debian's ffmpeg package) without a shell under a time-out. Uploads no longer
// need them (media/decode.server.ts decodes in process); the live path still does — save-audio.server.ts
// encodes the session's PCM and remuxes the browser's WebM/MP4 — as do the health check's `ffmpeg -version`
// and the transcription of a live recording's WebM/MP4 (normalise-audio.server.ts).

export const DEFAULT_FFPROBE_PATH = "ffprobe";
export const DEFAULT_FFMPEG_PATH = "ffmpeg";

const MAX_STDOUT_BYTES = 4 * 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;

export { MediaProbeError, type ProbeErrorReason } from "./probe-error.server";

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
