import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { clamdTarget, clamdVersion } from "~/services/antivirus/clamd.server";

// A real clamd (Debian's clamav-daemon, which `npm test` and .ci/run install) for the upload scans (ADR 0024). It
// loads a signature database of one signature of our own — the EICAR anti-virus test string, found at any offset —
// because the official databases cannot be downloaded here; production's clamd finds the same string with its own
// (Win.Test.EICAR_HDB-1 for the bare file). It listens on a Unix socket in its own directory: no port to race for.
//
//   const clamd = setupClamd();              // before setupTestApp({ env: { ANTIVIRUS_URL: clamd.url } })
//   const infected = withEicar(wavBytes);    // the same bytes with the test string written into the middle

export const CLAMD = "/usr/sbin/clamd";
export const TEST_SIGNATURE = "Skribent.Test.EICAR.UNOFFICIAL";

/** The EICAR test string, put together at run time so that no file of the project holds it. */
export function eicar() {
  return Buffer.from(
    ["X5O!P%@AP[4\\PZX54(P^)7CC)7}$", "EICAR-STANDARD-ANTIVIRUS-", "TEST-FILE!$H+H*"].join(""),
    "latin1",
  );
}

/** A copy of `bytes` with the test string written over its middle (a WAV stays a playable WAV: a click). */
export function withEicar(bytes: Uint8Array) {
  const copy = Buffer.from(bytes);
  const marker = eicar();
  if (copy.length < marker.length * 4) return Buffer.concat([copy, marker]);
  marker.copy(copy, Math.floor(copy.length / 2));
  return copy;
}

export type Clamd = { url: string; dir: string; stop: () => Promise<void> };

/** Starts clamd in `dir` and waits (up to 60 s) until it answers PING. */
export async function startClamd(dir: string, options: { streamMaxBytes?: number } = {}): Promise<Clamd> {
  fs.mkdirSync(path.join(dir, "db"), { recursive: true });
  const signature = eicar().subarray(0, 40).toString("hex");
  fs.writeFileSync(path.join(dir, "db", "skribent-test.ndb"), `Skribent.Test.EICAR:0:*:${signature}\n`);
  const socket = path.join(dir, "clamd.sock");
  const conf = path.join(dir, "clamd.conf");
  fs.writeFileSync(
    conf,
    [
      "Foreground yes",
      `LocalSocket ${socket}`,
      `DatabaseDirectory ${path.join(dir, "db")}`,
      `LogFile ${path.join(dir, "clamd.log")}`,
      `StreamMaxLength ${options.streamMaxBytes ?? 80 * 1024 * 1024}`,
      "MaxFileSize 100M",
      "SelfCheck 0",
    ].join("\n") + "\n",
  );
  const child = spawn(CLAMD, ["-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `unix://${socket}`;
  await answering(child, url, () => stderr);
  return { url, dir, stop: () => stopChild(child) };
}

async function answering(child: ChildProcess, url: string, stderr: () => string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`clamd exited with ${child.exitCode}: ${stderr().slice(-500)}`);
    try {
      await clamdVersion(clamdTarget(url), 2_000);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`clamd did not answer within 60 s: ${String(error)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function stopChild(child: ChildProcess) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** A clamd for the file's tests: its URL is known at once, so setupTestApp's env can name it. */
export function setupClamd(options: { streamMaxBytes?: number } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-clamd-"));
  const url = `unix://${path.join(dir, "clamd.sock")}`;
  let clamd: Clamd | undefined;
  beforeAll(async () => {
    clamd = await startClamd(dir, options);
  }, 90_000);
  afterAll(async () => {
    await clamd?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { url, dir };
}
