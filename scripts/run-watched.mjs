// A child process run with a watchdog on its output (scripts/test.mjs runs vitest this way). vitest's forks pool can
// hang for good, rarely: on 2026-11-27 a clean-clone run printed nothing for ten minutes, its main process and one
// worker both idle in epoll_wait with no timer armed (each waiting for an IPC message the other never sent); the
// files it had not run passed at once when run again. A run that prints nothing for `silenceMs` is stopped — the whole
// process group — and reported as hung, so the caller can run it once more instead of waiting for CI's time limit.
import { spawn } from "node:child_process";

/** Runs `command`, passing its output through; resolves with its exit status and whether the watchdog stopped it. */
export function runWatched(command, args, { env, silenceMs }) {
  return new Promise((resolve) => {
    // Its own process group, so that the watchdog (and a Ctrl-C here) reaches npx, vitest and every worker.
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env, detached: true });
    const killGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        child.kill(signal);
      }
    };
    let hung = false;
    let timer;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        hung = true;
        killGroup("SIGKILL");
      }, silenceMs);
    };
    const interrupted = (signal) => {
      killGroup("SIGTERM");
      process.exit(signal === "SIGINT" ? 130 : 143);
    };
    process.once("SIGINT", interrupted);
    process.once("SIGTERM", interrupted);
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      arm();
    });
    child.stderr.on("data", (chunk) => {
      process.stderr.write(chunk);
      arm();
    });
    arm();
    child.once("close", (code) => {
      clearTimeout(timer);
      process.removeListener("SIGINT", interrupted);
      process.removeListener("SIGTERM", interrupted);
      resolve({ status: code ?? 1, hung });
    });
  });
}
