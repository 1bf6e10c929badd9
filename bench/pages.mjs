#!/usr/bin/env node
// Page budgets (issue 9), through the built app:
//  1. Lighthouse (npm package, Debian's Chromium) with its default mobile profile — simulated Slow 4G
//     (150 ms RTT, 1.6 Mbit/s down) and 4× CPU slow-down — on the workspace, the letters list and the
//     editor of a user with LIGHTHOUSE_RECORDINGS recordings, each with a transcript and a letter. Goal: LCP ≤ 1.5 s.
//  2. wrk (Debian) on loopback: the same user with 1,000 recordings, 50 connections on each list route
//     (workspace, transcriptions, letters, and the JSON lists). Goal: p95 ≤ 50 ms. Beside each route, its floor:
//     the same bytes served from memory by a bare Express with the app's compression (bench/floor-server.mjs),
//     under the same wrk run — what the route costs with no session, database, rendering, audit or CSP. Last, the
//     signed-in floor: the cheapest answer behind a session (GET /api/prompts, 14 bytes), what any route pays here
//     for the session and one query before its own work.
// The first recording is made through the JSON API against the tests' protocol-faithful engines (Speechmatics
// batch, an OpenAI-compatible model); the rest are copies of its rows (bench/support-seed.mjs). A bench prints
// figures; it is not a test (exit 1 only when a run fails).
//
// Usage: npm run bench:pages
//        npm run build && node bench/pages.mjs --recordings 1000 --connections 50 --seconds 15
// Options: --only lighthouse|load  --lighthouse-recordings <n> (20)  --recordings <n> (1000)
//          --connections <n> (50)  --seconds <per route> (15)  --threads <wrk threads> (2)
//          --cpu-only: only the app's CPU time per answer (sequential requests), no wrk
//          --hold: after seeding, print the app's address and cookie and keep it running until Ctrl-C
//          --before <dir>: a checkout of the code before a change, installed and built (e.g. `git worktree add
//          /tmp/before <rev> && cd /tmp/before && npm install && npm run build`): with --only, the same data is measured
//          first on that code, then on this one (which migrates it further), both printed in the same run
//          env DATABASE_URL: a PostgreSQL server to use instead of the embedded default (a fresh database
//          is made on it and dropped)  BENCH_PORT (3470: app, +1 sign-in provider)
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { startEngineFakes } from "./support-engines.mjs";
import { apiClient, copyRecording, openDatabase, recordingWithLetter } from "./support-seed.mjs";
import { benchAppEnv, cpuMs, rssMiB, signIn, waitForApp, wrk } from "./support.mjs";

const { values: opts } = parseArgs({
  options: {
    only: { type: "string" },
    "lighthouse-recordings": { type: "string", default: "20" },
    recordings: { type: "string", default: "1000" },
    connections: { type: "string", default: "50" },
    seconds: { type: "string", default: "15" },
    threads: { type: "string", default: "2" },
    hold: { type: "boolean", default: false },
    "cpu-only": { type: "boolean", default: false },
    before: { type: "string" },
  },
});
if (opts.before && !opts.only) {
  console.error("--before needs --only lighthouse or --only load (the code after migrates the data further)");
  process.exit(2);
}
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PORT = Number(process.env.BENCH_PORT ?? 3470);
const APP = `http://localhost:${PORT}`;
const ACCOUNT = "anna-berger";
const work = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-pages-"));
const dataDir = path.join(work, "data");

let app;
let exited;
const fakes = [];
let database;

async function startFakes() {
  const { speech, llm, env } = await startEngineFakes(path.join(work, "support"));
  fakes.push(speech, llm);
  return env;
}

async function startApp(engines, root = ROOT) {
  // BENCH_NODE_ARGS: extra node flags for the app, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where time goes.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  app = spawn(process.execPath, [...nodeArgs, "server/index.mjs"], {
    cwd: root,
    env: benchAppEnv({
      port: PORT,
      dataDir,
      env: { ...engines, ...(database ? { DATABASE_URL: database.url } : {}) },
    }),
    stdio: ["ignore", "ignore", "inherit"],
  });
  exited = new Promise((resolve) => app.once("exit", resolve));
  await waitForApp(APP);
}

async function stopApp() {
  if (!app || app.exitCode !== null || app.signalCode !== null) return;
  app.kill("SIGTERM");
  await exited;
}

/**
 * The app's CPU time per answer, from sequential requests: unlike wrk's latencies it hardly moves when other
 * processes share the machine, so it compares two versions of the code measured on different runs. The median of
 * three rounds of `count`: a round that a major garbage collection falls into reads a third higher.
 */
async function cpuPerRequest(cookie, url, count = 100) {
  const rounds = [];
  for (let round = 0; round < 3; round++) {
    const before = cpuMs(app.pid);
    for (let i = 0; i < count; i++) {
      const answer = await fetch(`${APP}${url}`, { headers: { cookie, "accept-encoding": "gzip" } });
      await answer.arrayBuffer();
      if (!answer.ok) throw new Error(`${url}: ${answer.status}`);
    }
    rounds.push((cpuMs(app.pid) - before) / count);
  }
  return rounds.sort((a, b) => a - b)[1];
}

async function seed(cookie, count) {
  const client = apiClient(APP, cookie);
  const first = await recordingWithLetter(client, work, 1);
  await stopApp();
  const db = await openDatabase({ dataDir, databaseUrl: database?.url });
  try {
    const copies = count - 1 - Number((await db.query("select count(*)::int - 1 as n from recordings")).rows[0].n);
    if (copies > 0) await copyRecording(db, first.recordingKey, copies);
  } finally {
    await db.close();
  }
  return first;
}

async function lighthouseRun(cookie, pages, label = "") {
  const [{ default: lighthouse }, chromeLauncher] = await Promise.all([
    import("lighthouse"),
    import("chrome-launcher"),
  ]);
  const chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu"],
  });
  const results = [];
  try {
    for (const [name, url] of pages) {
      const runs = [];
      // Lighthouse's own trace sometimes misses the navigation (NO_NAVSTART, NO_FCP): that run is made again, twice at
      // most; any other error ends the bench.
      for (let run = 0, retries = 0; run < 3; run++) {
        const result = await lighthouse(
          `${APP}${url}`,
          { port: chrome.port, output: "json", logLevel: "error", onlyCategories: ["performance"] },
          { extends: "lighthouse:default", settings: { extraHeaders: { Cookie: cookie } } },
        );
        const { audits, finalDisplayedUrl, runtimeError } = result.lhr;
        if (runtimeError && /^NO_(NAVSTART|FCP)$/.test(runtimeError.code) && retries++ < 2) {
          run--;
          continue;
        }
        if (runtimeError) throw new Error(`${name}: ${runtimeError.message}`);
        if (new URL(finalDisplayedUrl).pathname !== new URL(`${APP}${url}`).pathname) {
          throw new Error(`${name}: Lighthouse ended at ${finalDisplayedUrl} (not signed in?)`);
        }
        runs.push({
          lcp: audits["largest-contentful-paint"].numericValue,
          fcp: audits["first-contentful-paint"].numericValue,
          tbt: audits["total-blocking-time"].numericValue,
          bytes: audits["total-byte-weight"].numericValue,
        });
      }
      runs.sort((a, b) => a.lcp - b.lcp);
      results.push({ name, url, ...runs[1] }); // the median of three
    }
  } finally {
    await chrome.kill();
  }
  console.log(
    `\nLighthouse ${lighthouseVersion()}, mobile profile (simulated Slow 4G, 4× CPU), median of 3 runs${label}:`,
  );
  console.log("page                 LCP      FCP      TBT     transferred");
  for (const r of results) {
    console.log(
      `${r.name.padEnd(20)} ${ms(r.lcp)}  ${ms(r.fcp)}  ${ms(r.tbt)}  ${(r.bytes / 1024).toFixed(1).padStart(7)} KiB  ${r.lcp <= 1500 ? "≤ 1.5 s" : "OVER 1.5 s"}`,
    );
  }
}

const ms = (value) => `${Math.round(value)} ms`.padStart(7);
const lighthouseVersion = () =>
  JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules/lighthouse/package.json"), "utf8")).version;

/** The same body and wrk run against bench/floor-server.mjs: what no implementation of the route can beat here. */
async function floorRun(body, contentType, settings) {
  const file = path.join(work, "floor-body");
  fs.writeFileSync(file, body);
  const port = PORT + 5;
  const server = spawn(process.execPath, [path.join(ROOT, "bench/floor-server.mjs"), file, contentType, String(port)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await new Promise((resolve, reject) => {
      server.stdout.once("data", resolve);
      server.once("exit", (code) => reject(new Error(`floor server exited with ${code}`)));
    });
    const base = `http://127.0.0.1:${port}`;
    wrk(work, `${base}/`, "", { ...settings, seconds: 2 });
    return wrk(work, `${base}/`, "", settings);
  } finally {
    server.kill("SIGTERM");
  }
}

async function loadRun(cookie, routes, label = "") {
  const settings = {
    connections: Number(opts.connections),
    seconds: Number(opts.seconds),
    threads: Number(opts.threads),
  };
  console.log(
    `\nwrk ${settings.connections} connections × ${settings.seconds} s per route, ${opts.recordings} recordings (${database ? "PostgreSQL" : "embedded PGlite"})${label}:`,
  );
  console.log(
    "route                              req/s     p50      p95      p99      max   errors  body      cpu/req   floor: req/s   p50     p95",
  );
  const rssBefore = rssMiB(app.pid);
  for (const [name, url] of routes) {
    // The previous route's backlog drains first (wrk leaves its last requests running in the app).
    await waitForApp(APP);
    const head = await fetch(`${APP}${url}`, { headers: { cookie, "accept-encoding": "gzip" } });
    const body = Buffer.from(await head.arrayBuffer());
    if (!head.ok) throw new Error(`${name}: ${head.status}`);
    wrk(work, `${APP}${url}`, cookie, { ...settings, seconds: 2 }); // warm-up, not counted
    await waitForApp(APP);
    const cpu = await cpuPerRequest(cookie, url);
    if (opts["cpu-only"]) {
      console.log(
        `${name.padEnd(32)} app CPU ${cpu.toFixed(1)} ms per answer (${(body.length / 1024).toFixed(0)} KiB)`,
      );
      continue;
    }
    const r = wrk(work, `${APP}${url}`, cookie, settings);
    await waitForApp(APP); // its backlog drains before the floor is measured beside it
    const floor = await floorRun(body, head.headers.get("content-type"), settings);
    const latency = (value) => `${(value / 1000).toFixed(1).padStart(6)}ms`;
    console.log(
      `${name.padEnd(32)} ${r.rps.toFixed(0).padStart(6)}  ${latency(r.p50)} ${latency(r.p95)} ${latency(r.p99)} ${(r.max / 1000).toFixed(0).padStart(6)}ms  ${String(r.errors + r.non2xx).padStart(5)}  ${`${(body.length / 1024).toFixed(0)} KiB`.padEnd(8)}  ${`${cpu.toFixed(1)} ms`.padStart(8)}  ${floor.rps.toFixed(0).padStart(10)} ${latency(floor.p50)} ${latency(floor.p95)}  ${r.p95 / 1000 <= 50 ? "" : "(p95 OVER 50 ms)"}`,
    );
  }
  console.log(`app memory: ${rssBefore.toFixed(0)} MiB RSS before, ${rssMiB(app.pid).toFixed(0)} MiB after`);
}

async function createDatabase() {
  if (!process.env.DATABASE_URL) return;
  const name = `skribent_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  database = { name, url: url.toString() };
}

async function dropDatabase() {
  if (!database) return;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${database.name} with (force)`);
  await admin.end();
}

const LOAD_ROUTES = [
  ["workspace /", "/"],
  ["transcriptions /transcriptions", "/transcriptions"],
  ["letters /arztbriefe", "/arztbriefe"],
  ["GET /api/files", "/api/files"],
  ["GET /api/arztbriefe", "/api/arztbriefe"],
  // Not a list: the cheapest signed-in answer there is (the user's saved prompts, none: 14 bytes, the session
  // and one query). What any route that checks its session in the database costs here before its own work.
  ["signed-in floor /api/prompts", "/api/prompts"],
];

// With --before: the code before first (it seeds the data), then this code on the same data.
const codes = opts.before
  ? [
      [path.resolve(opts.before), " — BEFORE (--before)"],
      [ROOT, " — AFTER (this checkout)"],
    ]
  : [[ROOT, ""]];

try {
  await createDatabase();
  const engines = await startFakes();
  const [[firstRoot]] = codes;
  await startApp(engines, firstRoot);
  let cookie = await signIn(APP, ACCOUNT);
  const lighthouseCount = Number(opts["lighthouse-recordings"]);
  const first = await seed(cookie, opts.only === "load" ? Number(opts.recordings) : lighthouseCount);
  const editor = `/arztbriefe/${first.letterKey.replace(/^arztbriefe\//, "")}`;
  const lighthousePages = [
    ["workspace", "/"],
    ["letters list", "/arztbriefe"],
    ["editor", editor],
  ];
  if (opts.only !== "load") {
    for (const [root, label] of codes) {
      await stopApp();
      await startApp(engines, root);
      cookie = await signIn(APP, ACCOUNT);
      await lighthouseRun(cookie, lighthousePages, label);
    }
  }
  if (opts.only !== "lighthouse") {
    if (opts.only !== "load") {
      await stopApp();
      const db = await openDatabase({ dataDir, databaseUrl: database?.url });
      await copyRecording(db, first.recordingKey, Number(opts.recordings) - lighthouseCount);
      await db.close();
    }
    for (const [root, label] of codes) {
      await stopApp();
      await startApp(engines, root);
      cookie = await signIn(APP, ACCOUNT);
      if (opts.hold) {
        console.log(`holding ${APP} with ${opts.recordings} recordings; Cookie: ${cookie}`);
        await new Promise((resolve) => process.once("SIGINT", resolve));
      } else await loadRun(cookie, LOAD_ROUTES, label);
    }
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await stopApp();
  for (const fake of fakes) await fake.close?.();
  await dropDatabase().catch((error) => console.error(error));
  fs.rmSync(work, { recursive: true, force: true });
}
