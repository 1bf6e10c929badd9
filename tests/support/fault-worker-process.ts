import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { bundleForNode } from "../../scripts/bundle-source.mjs";

// A job worker in a process of its own, which a test can kill the hard way (SIGKILL: no `finally`, no lease
// renewal, no result — a crashed machine). It is fault-worker.ts bundled from source the way
// scripts/build-worker.mjs bundles the real worker (scripts/bundle-source.mjs), into a temporary folder (not
// build/), whose node_modules points at the project's.

const ROOT = path.resolve(__dirname, "../..");

export async function bundleFaultWorker() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-fault-worker-"));
  const file = await bundleForNode(path.join(ROOT, "tests/support/fault-worker.ts"), path.join(dir, "worker.mjs"));
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export type FaultWorker = {
  process: ChildProcess;
  /** What it wrote, for a failure's message. */
  output(): string;
  /** SIGKILL, and its exit. */
  kill(): Promise<NodeJS.Signals | null>;
};

/** Starts the bundled worker with `env` (the app's configuration as variables) and waits until it works. */
export async function startFaultWorker(file: string, env: Record<string, string>): Promise<FaultWorker> {
  const child = spawn(process.execPath, [file], {
    cwd: ROOT,
    env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"] as const,
  });
  let output = "";
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, signal) => resolve(signal)),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output}`)), 20_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("[worker] started")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker exited before it started:\n${output}`));
    });
  });
  return {
    process: child,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      return exited;
    },
  };
}
