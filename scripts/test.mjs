#!/usr/bin/env node
// `npm test`: the whole suite — unit and loader/action tests on the embedded
// PGlite, again on PostgreSQL when TEST_DATABASE_URL names a server, then the
// end-to-end tests in Debian's Chromium, and last the log hygiene check of what the app logged meanwhile
// (scripts/log-hygiene.mjs; the logs are kept in test-results/app-logs.txt). Prints one closing line
// "N passed, N failed".
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runWatched } from "./run-watched.mjs";

const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-test-"));
// What the app and the fake servers log, collected here while the tests run (tests/setup/log-capture.ts for
// vitest, tests/setup/log-capture-reporter.ts for Playwright's web servers): test-results/ itself is emptied by
// Playwright when it starts.
const logCapture = { SKRIBENT_LOG_CAPTURE_DIR: path.join(reportDir, "app-logs") };
const appLogs = path.join("test-results", "app-logs.txt");
fs.mkdirSync(logCapture.SKRIBENT_LOG_CAPTURE_DIR);
const totals = { passed: 0, failed: 0, skipped: 0 };
const failures = [];
/** Names of the failed tests, repeated at the end so a truncated log still says which ones. */
const failedTests = [];
/** vitest runs stopped as hung and run again (scripts/run-watched.mjs). */
const hungRuns = [];

/**
 * The first lines of a failure's message, for the summary at the end: CI keeps only the tail of the output, and a
 * name without its cause sends the reader guessing.
 */
// eslint-disable-next-line no-control-regex
const ANSI_COLOURS = /\u001b\[[0-9;]*m/g;

function cause(message, location) {
  const lines = String(message ?? "")
    .replace(ANSI_COLOURS, "")
    .split("\n");
  const kept = lines
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(0, 3);
  const where = location ? `${path.relative(process.cwd(), location.file)}:${location.line}` : null;
  return [...kept, ...(where ? [`at ${where}`] : [])].map((line) => `\n      ${line.slice(0, 300)}`).join("");
}

function run(label, command, args, env = {}) {
  console.log(`\n▶ ${label}`);
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, ...env } });
  return result.status ?? 1;
}

/** Debian packages the suite needs, by the file that proves each is there. */
const debianPackages = [
  ["/usr/bin/chromium", "chromium"],
  ["/usr/bin/ffprobe", "ffmpeg"],
  ["/usr/bin/espeak-ng", "espeak-ng"],
  ["/usr/bin/sox", "sox"],
  ["/usr/sbin/nginx", "nginx"],
  ["/usr/bin/openssl", "openssl"],
  ["/usr/sbin/clamd", "clamav-daemon"],
  // initdb and postgres for the client-certificate test's own server (the machine's cluster comes from the same).
  ["/usr/lib/postgresql", "postgresql"],
];

function ensureDebianPackages() {
  const missing = debianPackages.filter(([file]) => !fs.existsSync(file)).map(([, name]) => name);
  if (missing.length === 0) return true;
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  if (root && fs.existsSync("/usr/bin/apt-get")) {
    console.log(`Installing Debian packages the tests need: ${missing.join(" ")}…`);
    spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
    spawnSync("apt-get", ["install", "-y", "-qq", ...missing], { stdio: "inherit" });
    if (debianPackages.every(([file]) => fs.existsSync(file))) return true;
  }
  console.error(
    `The tests need these Debian packages. Install them with:\n  sudo apt-get install ${missing.join(" ")}`,
  );
  return false;
}

/** A vitest run silent this long has hung (scripts/run-watched.mjs); its slowest test file prints within a minute. */
const SILENCE_MS = Number(process.env.SKRIBENT_TEST_SILENCE_SECONDS ?? 300) * 1000;

async function vitest(label, env) {
  const file = path.join(reportDir, `${label.replace(/\W+/g, "-")}.json`);
  const args = ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${file}`];
  const options = {
    env: { ...process.env, ...env, ...logCapture, SKRIBENT_LOG_CAPTURE_LABEL: label },
    silenceMs: SILENCE_MS,
  };
  console.log(`\n▶ unit and integration tests (${label})`);
  let { status, hung } = await runWatched("npx", args, options);
  if (hung) {
    // Every file runs again, so a failure is a failure; the summary says the run hung.
    console.log(
      `\nvitest (${label}) printed nothing for ${SILENCE_MS / 1000} s: stopped as hung; running it once more.`,
    );
    hungRuns.push(label);
    fs.rmSync(file, { force: true });
    console.log(`\n▶ unit and integration tests (${label}), again`);
    ({ status, hung } = await runWatched("npx", args, options));
    if (hung) failedTests.push(`vitest (${label}): hung twice (nothing printed for ${SILENCE_MS / 1000} s)`);
  }
  if (fs.existsSync(file)) {
    const report = JSON.parse(fs.readFileSync(file, "utf8"));
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    totals.skipped += report.numPendingTests + (report.numTodoTests ?? 0);
    for (const suite of report.testResults ?? []) {
      const file = path.relative(process.cwd(), suite.name);
      for (const test of suite.assertionResults ?? []) {
        if (test.status === "failed")
          failedTests.push(`${label}: ${file} › ${test.fullName}${cause(test.failureMessages?.[0])}`);
      }
      if ((suite.assertionResults ?? []).length === 0 && suite.status === "failed") {
        failedTests.push(`${label}: ${file} (${(suite.message ?? "").split("\n")[0]})`);
      }
    }
  } else if (status !== 0) totals.failed += 1;
  if (status !== 0) failures.push(`vitest (${label})`);
}

if (!ensureDebianPackages()) {
  console.log("\n0 passed, 1 failed");
  process.exit(1);
}

await vitest("pglite", { TEST_DATABASE_URL: "" });
if (process.env.TEST_DATABASE_URL) await vitest("postgresql", {});

if (process.env.SKIP_E2E === "1") {
  console.log("\nSKIP_E2E=1: end-to-end tests not run.");
} else {
  const file = path.join(reportDir, "e2e.json");
  const status = run("end-to-end tests (Chromium, JavaScript on and off)", "npx", ["playwright", "test"], {
    PLAYWRIGHT_JSON_OUTPUT_NAME: file,
    PLAYWRIGHT_REPORTERS: "list,json",
    ...logCapture,
  });
  if (fs.existsSync(file)) {
    const { stats } = JSON.parse(fs.readFileSync(file, "utf8"));
    totals.passed += stats.expected + stats.flaky;
    totals.failed += stats.unexpected;
    totals.skipped += stats.skipped;
    const report = JSON.parse(fs.readFileSync(file, "utf8"));
    const walk = (suite, titles) => {
      for (const spec of suite.specs ?? []) {
        for (const test of spec.tests ?? []) {
          if (test.status === "unexpected") {
            const error = test.results?.at(-1)?.error;
            failedTests.push(
              `playwright [${test.projectName}]: ${spec.file} › ${[...titles, spec.title].join(" › ")}${cause(error?.message, error?.location)}`,
            );
          }
        }
      }
      for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
    };
    for (const suite of report.suites ?? []) walk(suite, []);
  } else if (status !== 0) totals.failed += 1;
  if (status !== 0) failures.push("playwright");
}

// The scale-out proof (README "Production topology"): two instances and a worker behind nginx on the PostgreSQL
// the suite was given, with the build the end-to-end tests made. It prints its own steps and ends 0 when proven.
if (process.env.TEST_DATABASE_URL && process.env.SKIP_E2E !== "1") {
  const database = new URL(process.env.TEST_DATABASE_URL);
  const status = run("scale-out proof (nginx, two instances, a worker)", "node", ["scripts/scale-out.mjs"], {
    PGHOST: database.hostname,
    PGPORT: database.port || "5432",
    PGUSER: decodeURIComponent(database.username || "postgres"),
  });
  if (status === 0) totals.passed += 1;
  else {
    totals.failed += 1;
    failures.push("scale-out");
    failedTests.push("scale-out proof: scripts/scale-out.mjs (its output above says which step)");
  }
}

/** Keeps the collected logs in one file and scans it: a line with a secret or content fails the run. */
function logHygiene() {
  const dir = logCapture.SKRIBENT_LOG_CAPTURE_DIR;
  const files = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith(".log"))
    .sort();
  fs.mkdirSync(path.dirname(appLogs), { recursive: true });
  fs.writeFileSync(appLogs, files.map((name) => fs.readFileSync(path.join(dir, name), "utf8")).join(""));
  const status = run(`log hygiene (${appLogs})`, "node", ["scripts/log-hygiene.mjs", appLogs]);
  if (status === 0) {
    totals.passed += 1;
  } else {
    totals.failed += 1;
    failures.push("log hygiene");
    failedTests.push(`log hygiene: ${appLogs} (the offending lines are listed above, masked)`);
  }
}

logHygiene();
fs.rmSync(reportDir, { recursive: true, force: true });
if (failedTests.length > 0) console.log(`\nFailed tests:\n${failedTests.map((name) => `  ✗ ${name}`).join("\n")}`);
if (hungRuns.length > 0) console.log(`\nvitest hung and was run again: ${hungRuns.join(", ")}`);
if (failures.length > 0) console.log(`\nFailed: ${failures.join(", ")}`);
console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(failures.length > 0 ? 1 : 0);
