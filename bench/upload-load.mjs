#!/usr/bin/env node
// Uploads under load (issue 9), through the built app with its embedded defaults: 50 clinicians upload a
// 70 MB WAV each at the same moment, through the resumable upload in parts the browser uses above 8 MiB
// (start → part URLs → PUT each part → complete → update-file-metadata, which checks the file with ffprobe),
// while 200 other connections browse the list pages with wrk. Prints the upload and browse errors, the browse
// latency while it all runs, and the app's memory: RSS before (after 10 s of browsing), its peak while uploading, and
// the growth.
// Goals: no error; growth ≤ 200 MiB. A bench prints figures; it is not a test (exit 1 only when a run fails).
//
// Usage: npm run bench:upload-load
//        npm run build && node bench/upload-load.mjs --uploads 50 --browsers 200
// Options: --uploads <n> (50)  --browsers <wrk connections> (200)  --bytes <file size> (73400000)
//          env BENCH_PORT (3480: app, +1 sign-in provider)
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { apiClient } from "./support-seed.mjs";
import { benchAppEnv, signIn, uploadInParts, waitForApp, writeSilentWav } from "./support.mjs";

const { values: opts } = parseArgs({
  options: {
    uploads: { type: "string", default: "50" },
    browsers: { type: "string", default: "200" },
    bytes: { type: "string", default: "73400000" },
  },
});
const UPLOADS = Number(opts.uploads);
const BYTES = Number(opts.bytes);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PORT = Number(process.env.BENCH_PORT ?? 3480);
const APP = `http://localhost:${PORT}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-upload-load-"));
const ACCOUNTS = ["anna-berger", "jonas-keller", "emily-clarke", "max-hoffmann", "sara-yilmaz"];

const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

const WRK_SCRIPT = `
local paths = { "/", "/arztbriefe", "/transcriptions" }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT %d %d %d %.0f %.0f %.0f\\n", summary.requests, errors, summary.errors.status,
    latency:percentile(50), latency:percentile(95), latency.max))
end
`;

function browse(cookie, connections) {
  const script = path.join(work, "browse.lua");
  fs.writeFileSync(script, WRK_SCRIPT);
  const child = spawn(
    "wrk",
    ["-t2", `-c${connections}`, "-d3600s", "--timeout", "30s", "-s", script, "-H", `Cookie: ${cookie}`, APP],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => (out += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    async stop() {
      child.kill("SIGINT"); // wrk reports what it measured when interrupted
      await exited;
      const [requests, errors, non2xx, p50, p95, max] = /RESULT (.*)/.exec(out)[1].split(" ").map(Number);
      return { requests, errors, non2xx, p50, p95, max };
    },
  };
}

let app;
try {
  const wav = path.join(work, "big.wav");
  writeSilentWav(wav, BYTES);
  app = spawn(process.execPath, ["server/index.mjs"], {
    cwd: ROOT,
    env: benchAppEnv({
      port: PORT,
      dataDir: path.join(work, "data"),
      env: { AUTO_START_TRANSCRIPTION: "false" },
    }),
    stdio: ["ignore", "ignore", "inherit"],
  });
  await waitForApp(APP);
  const cookies = [];
  for (const account of ACCOUNTS) cookies.push(await signIn(APP, account));
  const clients = cookies.map((cookie) => apiClient(APP, cookie));
  // Warm-up: the list page once, so its route is loaded before measuring.
  await fetch(`${APP}/`, { headers: { cookie: cookies[0] } }).then((r) => r.arrayBuffer());

  const browsing = browse(cookies[0], Number(opts.browsers));
  // The baseline is the app browsed at pace, after its first full collection: a booted app holds some 300 MiB of
  // start-up garbage (migrations, module loading) until load makes V8 collect it, one to several seconds in. A
  // baseline taken before that collection made the growth anything from 11 to 223 MiB for the same code.
  const warmUp = [];
  for (let i = 0; i < 40; i++) {
    warmUp.push(rssMiB(app.pid));
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const before = rssMiB(app.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(app.pid))), 50);
  const started = performance.now();
  const results = await Promise.allSettled(
    Array.from({ length: UPLOADS }, (_, i) =>
      uploadInParts(clients[i % clients.length].post, wav, {
        bytes: BYTES,
        fileName: `Sprechstunde-${i + 1}.wav`,
        together: true,
        label: `upload ${i + 1}`,
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const browsed = await browsing.stop();
  const failed = results.filter((r) => r.status === "rejected");
  for (const f of failed.slice(0, 5)) console.error(f.reason);

  console.log(
    `\n${UPLOADS} uploads of ${(BYTES / 1e6).toFixed(1)} MB in parts at once (${ACCOUNTS.length} accounts), ` +
      `${opts.browsers} connections browsing /, /arztbriefe, /transcriptions:`,
  );
  console.log(
    `  uploads: ${UPLOADS - failed.length} stored, ${failed.length} failed, all done in ${seconds.toFixed(1)} s`,
  );
  console.log(
    `  browsing: ${browsed.requests} pages, ${browsed.errors} socket errors, ${browsed.non2xx} non-2xx; ` +
      `p50 ${(browsed.p50 / 1000).toFixed(0)} ms, p95 ${(browsed.p95 / 1000).toFixed(0)} ms, max ${(browsed.max / 1000).toFixed(0)} ms`,
  );
  console.log(
    `  app memory: RSS ${before.toFixed(0)} MiB before (10 s of browsing first: ${Math.max(...warmUp).toFixed(0)} MiB at most, ${Math.min(...warmUp).toFixed(0)} at least), peak ${peak.toFixed(0)} MiB, growth ${(peak - before).toFixed(0)} MiB (goal ≤ 200 MiB)`,
  );
  if (failed.length > 0 || browsed.errors > 0 || browsed.non2xx > 0) process.exitCode = 1;
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  if (app && app.exitCode === null) {
    app.kill("SIGTERM");
    await new Promise((resolve) => app.once("exit", resolve));
  }
  fs.rmSync(work, { recursive: true, force: true });
}
