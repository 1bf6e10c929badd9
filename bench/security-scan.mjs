#!/usr/bin/env node
// Two off-the-shelf scanners against the built app, each signed in as its own demo clinician with freshly seeded
// data (a real recording, its transcript and letter, templates, a prompt, a PDF, a live recording): sqlmap (SQL
// injection) on every JSON call of app/routes/api.* with real ids, on the screens' query parameters and on the
// forms' fields; then wapiti (crawler + attack modules: XSS, stored XSS, SQL, command and file injection, CRLF,
// open redirect, SSRF, CSRF, backup files, HTTP methods, cookie flags, CSP and security headers) over everything
// it reaches from the workspace. A bench prints figures; findings are not failures (they go to docs/security.md
// with their disposition). Exit 1 only when a tool could not run. About 35 minutes on the 2-core machine.
//
// The app runs with the embedded defaults (PGlite, local storage, development sign-in provider), patient records
// switched on (a directory), and the tests' protocol-faithful fakes for speech (Speechmatics batch) and the
// language model (OpenAI-compatible), so a transcript and a letter exist within seconds. Both scanners go through
// a small forward proxy in this process that counts every request and answer, refuses any other destination, and
// keeps wapiti from signing out, deleting the account or deleting the seeded data (see wapitiGuard in
// bench/security-scan/wapiti.mjs).
//
// Usage: npm run bench:security
//        node bench/security-scan.mjs --tools sqlmap --level 2 --risk 1 --report-dir /tmp/scan
// Options: --tools <sqlmap,wapiti> (both)  --level <sqlmap level 1–5> (2)  --risk <sqlmap risk 1–3> (1)
//          --only <text: only sqlmap targets whose route file or URL contains it>
//          --wapiti-scan-time <s of crawl> (300)  --wapiti-attack-time <s per module> (45)
//          --report-dir <dir>: keep sqlmap's logs and wapiti's log and JSON report there (the temp dir is removed)
//          --dry-run: send each sqlmap target once, without payloads, and print its status (checks the ids)
//          env BENCH_PORT (3700: app, +1 sign-in provider)

// The parts, in bench/security-scan/: config (options, address, accounts), api-targets and targets (what sqlmap is
// pointed at), proxy (the counting proxy and the SSRF endpoint), app (start, wait, stop), seed (sign-in and data),
// tools (the scanners' processes), sqlmap and wapiti (a run and what it reported), report (the summary).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadTestSupport } from "../scripts/fake-speech-bundle.mjs";
import { startApp, stopApp, waitForBusyApp, waitForQuietBuild } from "./security-scan/app.mjs";
import { ACCOUNTS, APP, TOOLS, opts } from "./security-scan/config.mjs";
import { startCountingProxy, startSsrfEndpoint } from "./security-scan/proxy.mjs";
import { printSqlmapSummary, printTrafficSummary, printWapitiSummary } from "./security-scan/report.mjs";
import { makeSpeech, seed, sessionOf } from "./security-scan/seed.mjs";
import { runSqlmap } from "./security-scan/sqlmap.mjs";
import { dryRun, sqlmapTargets } from "./security-scan/targets.mjs";
import { killCurrentTool, toolVersion } from "./security-scan/tools.mjs";
import { runWapiti } from "./security-scan/wapiti.mjs";
import { startEngineFakes } from "./support-engines.mjs";

async function main() {
  const started = performance.now();
  const versions = {};
  if (TOOLS.has("sqlmap")) versions.sqlmap = (await toolVersion("sqlmap", ["--version"])).split("\n")[0].trim();
  if (TOOLS.has("wapiti"))
    versions.wapiti =
      /Wapiti-[\d.]+/.exec(await toolVersion("wapiti", ["--version"]))?.[0] ?? "wapiti (version unknown)";
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-security-"));
  const reportDir = opts["report-dir"] && path.resolve(opts["report-dir"]);
  if (reportDir) fs.mkdirSync(reportDir, { recursive: true });
  let app, speech, llm, proxy, ssrf;
  let failed = false;
  const cleanup = async () => {
    killCurrentTool();
    if (app) await stopApp(app).catch(() => undefined);
    await speech?.close().catch(() => undefined);
    await llm?.close().catch(() => undefined);
    await proxy?.close().catch(() => undefined);
    await ssrf?.close().catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  };
  const onSignal = (signal) => void cleanup().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const support = path.join(work, "support");
    const { germanTextPdf } = await loadTestSupport("pdf-fixtures", support);
    await waitForQuietBuild();
    const engines = await startEngineFakes(support);
    ({ speech, llm } = engines);
    // Patient records switched on (a directory of PDFs per patient id), so that the patient id reaches a lookup.
    const patients = path.join(work, "patient-records");
    fs.mkdirSync(path.join(patients, "P-1001"), { recursive: true });
    fs.writeFileSync(path.join(patients, "P-1001", "Befund.pdf"), Buffer.from(await germanTextPdf()));
    app = startApp(path.join(work, "data"), {
      DISABLE_MFILES: "0",
      PATIENT_RECORDS_DRIVER: "directory",
      PATIENT_RECORDS_DIR: patients,
      RATE_LIMIT_PATIENT_RECORDS_PER_HOUR: "100000",
      ...engines.env,
    });
    await waitForBusyApp(app);
    const inputs = { wav: await makeSpeech(work), pdf: Buffer.from(await germanTextPdf()) };
    ssrf = await startSsrfEndpoint();
    proxy = await startCountingProxy([new URL(APP).origin, new URL(ssrf.url).origin]);

    console.log(`security scan of ${APP}, ${new Date().toISOString()}`);
    console.log(`  ${Object.values(versions).join(", ")}; node ${process.version}; ${os.cpus().length} cores`);

    // Each tool scans as its own clinician with freshly seeded data: sqlmap's requests use up that user's
    // hourly upload and letter limits, and its last targets delete what it was given.
    let sqlmapResult;
    if (TOOLS.has("sqlmap")) {
      try {
        const clinician = async (account) => {
          const cookie = await sessionOf(account);
          return { cookie, ids: await seed(cookie, inputs) };
        };
        const { targets, unmapped } = sqlmapTargets(
          await clinician(ACCOUNTS.sqlmapApi),
          await clinician(ACCOUNTS.sqlmapScreens),
        );
        if (opts["dry-run"]) {
          await dryRun(targets);
          return;
        }
        console.log(
          `\nsqlmap --level=${opts.level} --risk=${opts.risk} --dbms=PostgreSQL, ${targets.length} targets ` +
            `(JSON calls as ${ACCOUNTS.sqlmapApi}, screens as ${ACCOUNTS.sqlmapScreens}):`,
        );
        const t0 = performance.now();
        const results = await runSqlmap({ targets, proxy, work, reportDir });
        sqlmapResult = { results, unmapped, seconds: (performance.now() - t0) / 1000 };
        if (!results.some((r) => r.ran)) failed = true;
      } catch (error) {
        console.error("sqlmap could not run:", error);
        failed = true;
      }
    }
    let wapitiResult;
    if (TOOLS.has("wapiti")) {
      try {
        const cookie = await sessionOf(ACCOUNTS.wapiti);
        const ids = await seed(cookie, inputs);
        console.log(
          `\nwapiti as ${ACCOUNTS.wapiti}: crawling and attacking ${APP}/ (at most ${opts["wapiti-scan-time"]} s of ` +
            `crawl, ${opts["wapiti-attack-time"]} s per module)…`,
        );
        wapitiResult = await runWapiti({ ids, cookie, proxy, ssrf, work, reportDir });
        if (!wapitiResult.ran) failed = true;
      } catch (error) {
        console.error("wapiti could not run:", error);
        failed = true;
      }
    }

    console.log(`\n=== Summary (${((performance.now() - started) / 60_000).toFixed(1)} min) ===`);
    if (sqlmapResult) printSqlmapSummary(sqlmapResult.results, sqlmapResult.unmapped, sqlmapResult.seconds);
    if (wapitiResult) printWapitiSummary(wapitiResult);
    printTrafficSummary({ ssrf, proxy, app });
  } catch (error) {
    console.error(error);
    if (app) console.error(app.log().slice(-4000));
    failed = true;
  } finally {
    await cleanup();
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
