// sqlmap: one run per target through the counting proxy, and what it said.
import fs from "node:fs";
import path from "node:path";
import { APP, opts } from "./config.mjs";
import { delta, statusLine } from "./proxy.mjs";
import { runTool } from "./tools.mjs";

/**
 * What sqlmap said. `confirmed`: injection points it reported ("sqlmap identified the following injection
 * point(s)"). `rejected`: parameters it first thought injectable ("appears to be … injectable") and then refuted
 * itself ("false positive or unexploitable injection point detected") — typical of answers that change on every
 * request. `heuristic`: its quick pre-checks (SQL, XSS, file inclusion) that said "might be".
 */
export function parseSqlmap(output) {
  const lines = output.split("\n");
  const confirmed = [];
  const tentative = new Map();
  const rejected = [];
  const heuristic = [];
  let lastTentative;
  let inReport = false;
  for (const line of lines) {
    const appears = /parameter '([^']+)' (?:appears|seems) to be '([^']+)' injectable/i.exec(line);
    if (appears) {
      tentative.set(appears[1], appears[2]);
      lastTentative = appears[1];
    }
    if (/false positive or unexploitable injection point detected/i.test(line) && lastTentative) {
      rejected.push({ parameter: lastTentative, technique: tentative.get(lastTentative) });
      tentative.delete(lastTentative);
      lastTentative = undefined;
    }
    const might =
      /heuristic \((basic|XSS|FI)\) test shows that (?:\S+ )?parameter '([^']+)' might be (?:injectable|vulnerable)/i.exec(
        line,
      );
    if (might) heuristic.push({ parameter: might[2], test: might[1] });
    if (/identified the following injection point/i.test(line)) inReport = true;
    const point = inReport && /^Parameter: (.+?) \(/.exec(line.trim());
    if (point) confirmed.push({ parameter: point[1], line: line.trim() });
  }
  // A tentative point that was neither refuted nor reported: sqlmap stopped in between (time-out); count it.
  for (const [parameter, technique] of tentative)
    if (!confirmed.some((c) => c.parameter === parameter))
      confirmed.push({ parameter, line: `unrefuted: ${technique}` });
  const codes = /HTTP error codes detected during run:\s*\n?(.*)/i.exec(output)?.[1]?.trim() ?? "";
  const notInjectable = /all tested parameters do not appear to be injectable/i.test(output);
  const critical = lines.filter((l) => /\[CRITICAL\]/.test(l)).map((l) => l.replace(/^.*\[CRITICAL\]\s*/, "").trim());
  return { confirmed, rejected, heuristic, codes, notInjectable, critical };
}

export async function runSqlmap({ targets, proxy, work, reportDir }) {
  const results = [];
  const outputDir = path.join(work, "sqlmap");
  fs.mkdirSync(outputDir, { recursive: true });
  for (const [index, target] of targets.entries()) {
    const headers = [`Origin: ${APP}`, "Sec-Fetch-Site: same-origin"];
    if (target.kind === "json") headers.push("Content-Type: application/json", "Accept: application/json");
    const args = [
      "-u",
      `${APP}${target.url}`,
      "--method",
      target.method,
      ...(target.data ? ["--data", target.data] : []),
      // A form answers with a redirect to its page; following it renders that page (with everything the scan has
      // created so far) for every payload. The action's own answer (302, 400, 404, 500) is what tells.
      ...(target.kind === "form" ? ["--ignore-redirects"] : []),
      "--cookie",
      target.cookie,
      "--headers",
      headers.join("\n"),
      "--batch",
      `--level=${opts.level}`,
      `--risk=${opts.risk}`,
      "--dbms=PostgreSQL",
      "--skip-waf",
      // 404 is the app's ordinary answer to an id that is not (or no longer) the caller's: without this, sqlmap
      // gives up on a target whose first request used up what it names (an extracted PDF, a deleted letter).
      "--ignore-code=404",
      "--flush-session",
      "--disable-coloring",
      "--timeout=30",
      "--retries=1",
      `--proxy=${proxy.url}`,
      `--output-dir=${outputDir}`,
    ];
    const before = proxy.snapshot();
    const started = performance.now();
    const logFile = reportDir ? path.join(reportDir, `sqlmap-${String(index + 1).padStart(2, "0")}.log`) : undefined;
    if (logFile) fs.writeFileSync(logFile, `$ sqlmap ${args.map((a) => JSON.stringify(a)).join(" ")}\n\n`);
    const result = await runTool("sqlmap", args, { timeoutMs: 10 * 60_000, logFile });
    const seconds = (performance.now() - started) / 1000;
    const counted = delta(before, proxy.snapshot());
    const parsed = parseSqlmap(result.output);
    const skipped = /skipping to the next target/i.test(result.output) && !parsed.notInjectable;
    const ran = result.code === 0 && counted.requests > 0 && !skipped;
    results.push({ target, seconds, ...counted, ...parsed, ran, code: result.code, timedOut: result.timedOut });
    const notes = [
      ...parsed.rejected.map((r) => `'${r.parameter}' first looked injectable (${r.technique}), refuted by sqlmap`),
      ...parsed.heuristic.map((h) => `heuristic ${h.test} check on '${h.parameter}' said "might be"`),
    ];
    const verdict = parsed.confirmed.length
      ? `INJECTABLE: ${parsed.confirmed.map((f) => `'${f.parameter}' (${f.line})`).join(", ")}`
      : !ran
        ? `did not run (exit ${result.code}${result.timedOut ? ", timed out" : ""})`
        : parsed.notInjectable
          ? "not injectable"
          : "no injection point reported";
    console.log(
      `  [${index + 1}/${targets.length}] ${target.method} ${target.url.slice(0, 90)}  ` +
        `${counted.requests} req (${statusLine(counted.byStatus)}) ${seconds.toFixed(0)} s — ${verdict}` +
        (notes.length ? `; ${notes.join("; ")}` : ""),
    );
  }
  return results;
}
