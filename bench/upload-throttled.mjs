#!/usr/bin/env node
// Uploads a 70 MB WAV through the real browser code (Chromium, public/pe/upload.js: parts of 5 MiB,
// retries, resume) over a slow, flaky link — 1 Mbit/s each way with the link dropping for 30 s a minute
// into the upload — and prints how many parts had to be sent again. Goal: completes, ≤ 1 part resent.
// The link is bench/throttle-proxy.mjs in front of the built app (APP_URL points at the proxy, so pages,
// API calls and the store's part URLs all go through it; the sign-in provider is reached directly).
// A bench prints figures; it is not a test (exit 1 only when the upload fails or times out).
//
// Usage: npm run bench:throttled                                   (70 MB at 1 Mbit/s: about 20 minutes)
//        npm run build && node bench/upload-throttled.mjs --size 12 --rate 8 --drop-at 3 --drop-for 30
// Options: --size <MB> (70)  --rate <Mbit/s> (1)  --drop-at <s after the first part starts> (60)
//          --drop-for <s> (30)  --timeout <min> (25);  env BENCH_PORT (3410: app, +1 proxy, +2 provider)
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "@playwright/test";
import { writeSilentWav } from "./support.mjs";
import { startThrottleProxy } from "./throttle-proxy.mjs";

const { values: opts } = parseArgs({
  options: {
    size: { type: "string", default: "70" },
    rate: { type: "string", default: "1" },
    "drop-at": { type: "string", default: "60" },
    "drop-for": { type: "string", default: "30" },
    timeout: { type: "string", default: "25" },
  },
});
const SIZE_MB = Number(opts.size);
const RATE_MBIT = Number(opts.rate);
const DROP_AT_S = Number(opts["drop-at"]);
const DROP_FOR_S = Number(opts["drop-for"]);
const TIMEOUT_MS = Number(opts.timeout) * 60_000;
for (const [name, value] of Object.entries({ SIZE_MB, RATE_MBIT, DROP_AT_S, DROP_FOR_S, TIMEOUT_MS }))
  if (!Number.isFinite(value) || value < 0) throw new Error(`bad option ${name}: ${value}`);

// 70 MB → 73,400,000 bytes, just under the app's 70 MiB limit.
const BYTES = Math.floor((SIZE_MB * 1_048_576) / 1000) * 1000;
const APP_PORT = Number(process.env.BENCH_PORT ?? 3410);
const PROXY_PORT = APP_PORT + 1;
const OIDC_PORT = APP_PORT + 2;
const APP = `http://localhost:${PROXY_PORT}`;
const FILE_NAME = `throttled-bench-${SIZE_MB}mb.wav`;
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

function makeWav(file) {
  writeSilentWav(file, BYTES);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes) => `${(bytes / 1_048_576).toFixed(1)} MiB`;

/** Everything started here, undone in reverse order exactly once — on success, failure or Ctrl-C. */
const cleanups = [];
let cleaning = null;
function cleanup() {
  cleaning ??= (async () => {
    for (const undo of cleanups.reverse()) await undo().catch((error) => console.error("cleanup:", error.message));
  })();
  return cleaning;
}
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"])
  process.once(signal, () => {
    interrupted = true;
    console.error(`\n${signal}: cleaning up`);
    cleanup().finally(() => process.exit(130));
  });

async function startApp(dataDir, logFile) {
  const log = fs.openSync(logFile, "a");
  const server = spawn(process.execPath, ["server/index.mjs"], {
    env: {
      ...process.env,
      PORT: String(APP_PORT),
      DEV_OIDC_PORT: String(OIDC_PORT),
      APP_URL: APP,
      DATA_DIR: path.join(dataDir, "app"),
      APP_ENV: "test",
      RATE_LIMIT_SIGNIN_PER_MINUTE: "1000",
    },
    stdio: ["ignore", log, log],
  });
  fs.closeSync(log);
  const exited = new Promise((resolve) => server.once("exit", resolve));
  cleanups.push(async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
    const kill = setTimeout(() => server.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(kill);
  });
  // Health is asked directly, not through the link.
  for (let i = 0; i < 300; i++) {
    if (server.exitCode !== null) throw new Error(`the app exited with ${server.exitCode}`);
    const ok = await fetch(`http://localhost:${APP_PORT}/resources/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return server;
    await sleep(100);
  }
  throw new Error("the app did not become healthy in 30 s");
}

async function signIn(page, accountId) {
  const settled = (url) => url.port === String(PROXY_PORT) && !/^\/(interaction|auth|login)/.test(url.pathname);
  await page.goto(`${APP}/`);
  await page.waitForURL((url) => url.pathname.startsWith("/interaction") || settled(url));
  if (new URL(page.url()).pathname.startsWith("/interaction"))
    await page.locator(`button[name="accountId"][value="${accountId}"]`).click();
  await page.waitForURL(settled);
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-throttled-"));
  cleanups.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  logFile = path.join(tmp, "app.log");
  const wav = path.join(tmp, FILE_NAME);
  makeWav(wav);

  const proxy = await startThrottleProxy({
    listenPort: PROXY_PORT,
    targetPort: APP_PORT,
    bitsPerSecond: RATE_MBIT * 1e6,
  });
  cleanups.push(() => proxy.close());
  await startApp(tmp, logFile);

  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  cleanups.push(() => browser.close());
  const page = await browser.newPage({ locale: "de-DE" });
  page.setDefaultTimeout(180_000);
  page.setDefaultNavigationTimeout(180_000);

  // What the browser does, as seen from the page.
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const attempts = new Map(); // part number → [{ start, end, outcome }]
  const byRequest = new Map();
  const wholePuts = [];
  let plan = null; // the start answer: { part_size, part_count }
  let statusCalls = 0;
  let firstPartAt = null;
  let lastPartDoneAt = null;
  let drop = null; // { at, until, inFlight }
  let dropTimer = null;
  cleanups.push(async () => clearTimeout(dropTimer));

  const scheduleDrop = () => {
    dropTimer = setTimeout(() => {
      const inFlight = [...attempts].filter(([, list]) => list.some((a) => !a.end)).map(([n]) => n);
      drop = { at: now(), until: null, inFlight, bytesUp: proxy.bytesUp };
      proxy.drop(DROP_FOR_S * 1000).then(() => (drop.until = now()));
    }, DROP_AT_S * 1000);
  };
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname === "/api/upload-parts/status") statusCalls++;
    if (request.method() !== "PUT" || !url.pathname.startsWith("/resources/storage/")) return;
    const attempt = { start: now(), end: null, outcome: "…" };
    byRequest.set(request, attempt);
    const partNumber = Number(url.searchParams.get("partNumber"));
    if (!partNumber) return void wholePuts.push(attempt);
    if (!attempts.has(partNumber)) attempts.set(partNumber, []);
    attempts.get(partNumber).push(attempt);
    if (firstPartAt === null) {
      firstPartAt = attempt.start;
      scheduleDrop();
    }
  });
  page.on("requestfinished", async (request) => {
    const attempt = byRequest.get(request);
    if (!attempt) return;
    attempt.end = now();
    attempt.outcome = String((await request.response())?.status() ?? "?");
    if (attempt.outcome.startsWith("2")) lastPartDoneAt = attempt.end;
  });
  page.on("requestfailed", (request) => {
    const attempt = byRequest.get(request);
    if (!attempt) return;
    attempt.end = now();
    attempt.outcome = request.failure()?.errorText ?? "failed";
  });
  page.on("response", async (response) => {
    if (new URL(response.url()).pathname !== "/api/upload-parts/start") return;
    plan = await response.json().catch(() => null);
  });

  console.log(`Signing in through the link (${RATE_MBIT} Mbit/s) …`);
  await signIn(page, "anna-berger");
  const signedInAt = now();

  const form = page.locator("form[data-upload-form]");
  await form.locator('input[name="audio"]').setInputFiles(wav);
  const start = page.locator("button[data-upload-start]");
  const hasDialogButton = await start
    .waitFor({ state: "visible", timeout: 10_000 })
    .then(() => true)
    .catch(() => false);
  if (hasDialogButton) await start.click();
  else await form.locator('button[type="submit"]').click();
  const clickedAt = now();
  console.log(
    `Uploading ${FILE_NAME} (${BYTES.toLocaleString("en")} bytes) via ${hasDialogButton ? "the template dialog" : "the form's submit button"} …`,
  );

  const listed = page.locator("[data-recording]", { hasText: FILE_NAME }).first();
  const errorBanner = page.locator("[data-upload-error]").first();
  const progress = setInterval(() => {
    const done = [...attempts.values()].filter((list) => list.some((a) => a.outcome.startsWith("2"))).length;
    const total = plan?.part_count ?? "?";
    const link = drop && drop.until === null ? ", link down" : "";
    console.log(`  ${secs(now() - clickedAt)}: ${done}/${total} parts, ${mib(proxy.bytesUp)} sent upstream${link}`);
  }, 30_000);
  cleanups.push(async () => clearInterval(progress));
  const verdict = await Promise.race([
    listed.waitFor({ state: "attached", timeout: TIMEOUT_MS }).then(() => ({ completed: true })),
    errorBanner
      .waitFor({ state: "visible", timeout: TIMEOUT_MS })
      .then(async () => ({ completed: false, error: (await errorBanner.innerText()).trim() })),
  ]).catch((error) => ({ completed: false, error: `no result: ${error.message.split("\n")[0]}` }));
  clearInterval(progress);
  const finishedAt = now();
  if (interrupted) return;

  // The figures.
  const parts = [...attempts].sort(([a], [b]) => a - b);
  const resent = parts.filter(([, list]) => list.length > 1);
  const partCount = plan?.part_count ?? parts.length;
  console.log(`\nThrottled upload of ${mib(BYTES)} (${BYTES.toLocaleString("en")} bytes) through the browser`);
  console.log(`  link                 ${RATE_MBIT} Mbit/s each way, shared by all connections`);
  const idealMs = ((BYTES * 8) / (RATE_MBIT * 1e6)) * 1000;
  console.log(`  ideal transfer time  ${secs(idealMs)} for the file alone at the full rate`);
  if (drop)
    console.log(
      `  drop                 ${DROP_FOR_S} s at ${secs(drop.at - firstPartAt)} after the first part started` +
        ` (parts in flight: ${drop.inFlight.join(", ") || "none"}; ${mib(drop.bytesUp)} sent upstream until then)`,
    );
  else console.log(`  drop                 none (the upload ended before ${DROP_AT_S} s)`);
  console.log(`  sign-in              ${secs(signedInAt)}`);
  console.log(`  total elapsed        ${secs(finishedAt - clickedAt)} from the start click to the result`);
  if (firstPartAt !== null && lastPartDoneAt !== null)
    console.log(`  parts phase          ${secs(lastPartDoneAt - firstPartAt)} from the first part PUT to the last`);
  console.log(`  bytes sent upstream  ${mib(proxy.bytesUp)} over ${proxy.connections} connections`);
  console.log(
    `  parts                ${partCount}${plan?.part_size ? ` of ${mib(plan.part_size)}` : ""}; status (resume) calls: ${statusCalls}`,
  );
  for (const [n, list] of parts)
    console.log(
      `    part ${String(n).padStart(2)}: ${list.length} attempt${list.length > 1 ? "s" : " "}  ` +
        list.map((a) => `${a.outcome} ${secs((a.end ?? finishedAt) - a.start)}`).join(", "),
    );
  if (wholePuts.length)
    console.log(
      `  whole-file PUTs      ${wholePuts.length}: ${wholePuts.map((a) => `${a.outcome} ${secs((a.end ?? finishedAt) - a.start)}`).join(", ")}`,
    );
  console.log(`  parts resent: ${resent.length}${resent.length ? ` (${resent.map(([n]) => n).join(", ")})` : ""}`);
  console.log(`  completed: ${verdict.completed ? "yes" : "no"}`);
  if (verdict.error) console.log(`  error: ${verdict.error}`);
  console.log("  goal: completes, ≤ 1 part resent");

  if (!verdict.completed) {
    printAppLog();
    process.exitCode = 1;
  }
}

let logFile = null;
function printAppLog() {
  if (!logFile || !fs.existsSync(logFile)) return;
  const tail = fs.readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-30).join("\n");
  if (tail) console.log(`\nLast lines of the app's log:\n${tail}`);
}

main()
  .catch((error) => {
    if (interrupted) return;
    console.error(error);
    printAppLog();
    process.exitCode = 1;
  })
  .finally(cleanup);
