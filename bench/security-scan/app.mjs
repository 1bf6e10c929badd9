// The app: started from the build (once that has stopped changing), waited for, stopped.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { benchAppEnv, waitForApp } from "../support.mjs";
import { APP, PORT, ROOT, sleep } from "./config.mjs";

export function startApp(dataDir, env) {
  const child = spawn(process.execPath, ["server/index.mjs"], {
    cwd: ROOT,
    env: benchAppEnv({ port: PORT, dataDir, env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const errors = [];
  const keep = (chunk) => {
    log = (log + chunk).slice(-20_000);
    for (const line of String(chunk).split("\n"))
      if (/\[error\]|unexpected failure|Unhandled|TypeError|ReferenceError/.test(line)) errors.push(line.slice(0, 300));
  };
  child.stdout.setEncoding("utf8").on("data", keep);
  child.stderr.setEncoding("utf8").on("data", keep);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { child, exited, log: () => log, errors };
}

/** Others may be rebuilding the shared tree: start only from a build that has not changed for 20 s. */
export async function waitForQuietBuild() {
  const files = ["build/index.js", "build/version.txt"].map((f) => path.join(ROOT, f));
  for (let waited = 0; waited < 600_000; waited += 2_000) {
    const newest = Math.max(...files.map((f) => fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? Infinity));
    if (Date.now() - newest > 20_000) return;
    await sleep(2_000);
  }
  throw new Error("build/ kept changing for 10 minutes");
}

/** support.mjs's 30 s wait, repeated: on a shared, loaded machine the first boot (migrations) takes longer. */
export async function waitForBusyApp(app) {
  for (let attempt = 1; ; attempt++) {
    if (app.child.exitCode !== null) throw new Error(`the app exited while starting:\n${app.log()}`);
    try {
      return await waitForApp(APP);
    } catch (error) {
      if (attempt === 6) throw error;
    }
  }
}

export async function stopApp(app) {
  if (app.child.exitCode !== null || app.child.signalCode !== null) return;
  app.child.kill("SIGTERM");
  const timer = setTimeout(() => app.child.kill("SIGKILL"), 20_000);
  await app.exited;
  clearTimeout(timer);
}
