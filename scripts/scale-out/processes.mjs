// Processes: every child is stopped at the end, by its own pid, also on failure.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT, sleep } from "./config.mjs";
import { ProofError, stops } from "./report.mjs";

export const children = new Map(); // name → { child, log, exited }
export const cleanups = [];
export let tmp;

/** The run's directory (logs, data, nginx, the internal CA), removed at the end. */
export function makeTmp() {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-scale-out-"));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
}

export function startProcess(name, command, args, env) {
  const log = path.join(tmp, `${name}.log`);
  const out = fs.openSync(log, "a");
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", out, out] });
  fs.closeSync(out);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const entry = { child, log, exited, pid: child.pid };
  children.set(name, entry);
  exited.then(() => {
    if (children.get(name) === entry) children.delete(name);
  });
  return entry;
}

export async function stopProcess(name, signal = "SIGTERM", graceMs = 20_000, why = "") {
  const entry = children.get(name);
  if (!entry) return undefined;
  if (why) stops.push(`${name} ${signal} ${why}`);
  const t0 = Date.now();
  entry.child.kill(signal);
  const timer = setTimeout(() => entry.child.kill("SIGKILL"), graceMs);
  const result = await entry.exited;
  clearTimeout(timer);
  return { ...result, ms: Date.now() - t0 };
}

export function tail(file, lines = 15) {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

export async function waitFor(what, probe, { timeoutMs = 30_000, everyMs = 100 } = {}) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    if (Date.now() > until) throw new ProofError(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

export async function cleanup() {
  for (const [name] of [...children]) await stopProcess(name, "SIGTERM", 5_000).catch(() => undefined);
  for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => undefined);
}
