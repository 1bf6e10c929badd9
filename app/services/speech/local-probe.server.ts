import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { childEnv } from "../config/child-env.server";

// Native speech libraries (whisper.cpp, sherpa-onnx) end the whole process on a model file they cannot use. So a
// model is first loaded in a short-lived child process (`node -e SOURCE -- ...argv`): only a file that passed is
// loaded in this one.

/** How a check process failed: `why` says how it ended, `stderr` is what it wrote (absent: it never started). */
export type ProbeRunFailure = { why: string; stderr?: string };

/** Runs `source` with `node -e`; resolves to undefined when it exits 0, else to how it failed. */
export function runProbeProcess(
  source: string,
  argv: string[],
  timeoutMs: number,
): Promise<ProbeRunFailure | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["-e", source, "--", ...argv], {
      stdio: ["ignore", "ignore", "pipe"],
      env: childEnv(),
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-20_000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ why: `could not start a check process: ${error.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(undefined);
      resolve({ why: signal ? `the loader crashed (${signal})` : `the loader failed (exit ${code})`, stderr });
    });
  });
}

/** The last three lines of `text` that look like an error (`telling`), else its last three; at most 400 chars. */
export function probeSaid(text: string, telling: RegExp): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => telling.test(l));
  const picked = (lines.length ? lines : text.split("\n").filter(Boolean)).slice(-3).join(" | ");
  return picked.length > 400 ? `${picked.slice(0, 400)}…` : picked;
}

/** `why`, followed by what the process said when it said something. */
export function probeReason(why: string, said: string): string {
  return said ? `${why}: ${said}` : why;
}

/**
 * What a remembered check result is keyed on besides its arguments: each file's name, size and modification
 * time, so a replaced file is checked again; `unreadable` when a file cannot be read.
 */
export async function filesStamp(files: string[]): Promise<{ stamp: string } | { unreadable: string }> {
  try {
    const stats = await Promise.all(files.map((f) => stat(f)));
    return { stamp: files.map((f, i) => `${f}:${stats[i].size}:${stats[i].mtimeMs}`).join("|") };
  } catch (error) {
    return { unreadable: `cannot be read (${(error as Error).message})` };
  }
}
