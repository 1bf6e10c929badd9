// The scanners as child processes: their versions, a run to its end or time-out, the kill on cleanup.
import { spawn } from "node:child_process";
import fs from "node:fs";
import { run } from "./config.mjs";

let current; // the tool's child process, killed on cleanup
let stopped = false; // cleanup has begun: no further tool starts

export async function toolVersion(command, args) {
  try {
    const { stdout, stderr } = await run(command, args, { timeout: 60_000 });
    return `${stdout}\n${stderr}`;
  } catch (error) {
    throw new Error(`${command} could not run: ${error.message}`, { cause: error });
  }
}

/** Runs a tool to its end (or `timeoutMs`), keeping its output; the child is killed on cleanup. */
export function runTool(command, args, { timeoutMs, logFile }) {
  if (stopped) return Promise.resolve({ code: -1, output: "not started: the bench is stopping", timedOut: false });
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group, so that a kill reaches what it started
      env: { ...process.env, TERM: "dumb" },
    });
    current = child;
    let output = "";
    const keep = (chunk) => {
      output += chunk;
      if (logFile) fs.appendFileSync(logFile, chunk);
    };
    child.stdout.setEncoding("utf8").on("data", keep);
    child.stderr.setEncoding("utf8").on("data", keep);
    const timer = setTimeout(() => killGroup(child), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: -1, output: `${output}\n${error.message}`, timedOut: false });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      current = undefined;
      resolve({ code: code ?? -1, signal, output, timedOut: signal === "SIGKILL" });
    });
  });
}

function killGroup(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

/**
 * Kills the tool that is running, if any, and lets no other start (cleanup). The loop over the scan targets goes on
 * until the bench exits: it started the next target's scan, which outlived the bench against a stopped app and wrote
 * into the temporary directory cleanup had just removed.
 */
export function killCurrentTool() {
  stopped = true;
  killGroup(current);
}
