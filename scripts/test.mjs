#!/usr/bin/env node
// `npm test`: the whole suite — unit and loader/action tests on the embedded
// PGlite, again on PostgreSQL when TEST_DATABASE_URL names a server, then the
// end-to-end tests in Debian's Chromium. Prints one closing line
// "N passed, N failed".
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-test-"));
const totals = { passed: 0, failed: 0, skipped: 0 };
const failures = [];

function run(label, command, args, env = {}) {
  console.log(`\n▶ ${label}`);
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, ...env } });
  return result.status ?? 1;
}

function ensureChromium() {
  if (fs.existsSync("/usr/bin/chromium")) return true;
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  if (root && fs.existsSync("/usr/bin/apt-get")) {
    console.log("Chromium is missing: installing Debian's package (apt-get install chromium)…");
    spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
    spawnSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "inherit" });
    if (fs.existsSync("/usr/bin/chromium")) return true;
  }
  console.error(
    "The end-to-end tests need Debian's Chromium at /usr/bin/chromium. Install it with:\n  sudo apt-get install chromium",
  );
  return false;
}

function vitest(label, env) {
  const file = path.join(reportDir, `${label.replace(/\W+/g, "-")}.json`);
  const status = run(
    `unit and integration tests (${label})`,
    "npx",
    ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${file}`],
    env,
  );
  if (fs.existsSync(file)) {
    const report = JSON.parse(fs.readFileSync(file, "utf8"));
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    totals.skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  } else if (status !== 0) totals.failed += 1;
  if (status !== 0) failures.push(`vitest (${label})`);
}

vitest("pglite", { TEST_DATABASE_URL: "" });
if (process.env.TEST_DATABASE_URL) vitest("postgresql", {});

if (process.env.SKIP_E2E === "1") {
  console.log("\nSKIP_E2E=1: end-to-end tests not run.");
} else if (ensureChromium()) {
  const file = path.join(reportDir, "e2e.json");
  const status = run("end-to-end tests (Chromium, JavaScript on and off)", "npx", ["playwright", "test"], {
    PLAYWRIGHT_JSON_OUTPUT_NAME: file,
    PLAYWRIGHT_REPORTERS: "list,json",
  });
  if (fs.existsSync(file)) {
    const { stats } = JSON.parse(fs.readFileSync(file, "utf8"));
    totals.passed += stats.expected + stats.flaky;
    totals.failed += stats.unexpected;
    totals.skipped += stats.skipped;
  } else if (status !== 0) totals.failed += 1;
  if (status !== 0) failures.push("playwright");
} else {
  totals.failed += 1;
  failures.push("chromium missing");
}

fs.rmSync(reportDir, { recursive: true, force: true });
if (failures.length > 0) console.log(`\nFailed: ${failures.join(", ")}`);
console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(failures.length > 0 ? 1 : 0);
