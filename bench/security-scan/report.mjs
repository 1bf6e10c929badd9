// The summary printed at the end.
import { API_NOT_SCANNED } from "./api-targets.mjs";
import { statusLine } from "./proxy.mjs";

export function printSqlmapSummary(results, unmapped, seconds) {
  const total = results.reduce((n, r) => n + r.requests, 0);
  const statuses = new Map();
  for (const r of results) for (const [s, n] of r.byStatus) statuses.set(s, (statuses.get(s) ?? 0) + n);
  const routes = new Set(results.map((r) => r.target.route)).size;
  const params = results.reduce((n, r) => n + (`${r.target.url}${r.target.data ?? ""}`.match(/\*/g)?.length ?? 0), 0);
  const kinds = ["json", "page", "form"].map((k) => `${k} ${results.filter((r) => r.target.kind === k).length}`);
  console.log(
    `\nsqlmap: ${results.length} targets (${kinds.join(", ")}) on ${routes} routes, ${params} injection points, ` +
      `${total} requests, ${(seconds / 60).toFixed(1)} min`,
  );
  console.log(`  answers: ${statusLine(statuses)}`);
  const notScanned = Object.entries(API_NOT_SCANNED).map(([id, why]) => `${id} (${why})`);
  console.log(`  API routes not scanned: ${notScanned.join("; ")}`);
  if (unmapped.length) console.log(`  API routes with no target yet (add them to apiTargets): ${unmapped.join(", ")}`);
  const failed = results.filter((r) => !r.ran);
  if (failed.length)
    console.log(`  did not run: ${failed.map((r) => `${r.target.method} ${r.target.url}`).join(", ")}`);
  const critical = [...new Set(results.flatMap((r) => r.critical))];
  if (critical.length) console.log(`  sqlmap's critical messages: ${critical.join(" | ")}`);
  const confirmed = results.flatMap((r) => r.confirmed.map((f) => ({ ...f, target: r.target })));
  console.log(`  injection points reported by sqlmap: ${confirmed.length}`);
  for (const f of confirmed) console.log(`    ${f.target.method} ${f.target.url} '${f.parameter}' — ${f.line}`);
  const rejected = results.flatMap((r) => r.rejected.map((f) => ({ ...f, target: r.target })));
  console.log(`  first thought injectable, then refuted by sqlmap's own false-positive check: ${rejected.length}`);
  for (const f of rejected) console.log(`    ${f.target.method} ${f.target.url} '${f.parameter}' (${f.technique})`);
  const heuristic = results.flatMap((r) => r.heuristic.map((f) => ({ ...f, target: r.target })));
  console.log(`  heuristic "might be" pre-checks: ${heuristic.length}`);
  for (const f of heuristic) console.log(`    ${f.target.method} ${f.target.url} '${f.parameter}' (${f.test})`);
}

export function printWapitiSummary(result) {
  console.log(
    `\nwapiti: ${result.requests} requests, ${(result.seconds / 60).toFixed(1)} min${result.crawled ? `, ${result.crawled} URLs and forms crawled` : ""}`,
  );
  console.log(`  answers: ${statusLine(result.byStatus)}`);
  if (!result.ran) {
    console.log(`  wapiti did not write a report (exit ${result.code}):\n${result.output.slice(-3000)}`);
    return;
  }
  const byCategory = new Map();
  for (const f of result.findings) {
    const key = `${f.section}: ${f.category}`;
    byCategory.set(key, [...(byCategory.get(key) ?? []), f]);
  }
  if (!byCategory.size) console.log("  findings: none");
  for (const [category, list] of byCategory) {
    console.log(`  ${category} (${list.length})`);
    for (const f of list) {
      const where = `${f.request}${f.intent ? ` (intent=${decodeURIComponent(f.intent)})` : ""}`;
      console.log(`    ${where}${f.parameter ? ` [${f.parameter}]` : ""} — ${f.info}`);
    }
  }
}

/** The SSRF endpoint's calls, the proxy's 5xx, unanswered, blocked and refused requests, and the app's error lines. */
export function printTrafficSummary({ ssrf, proxy, app }) {
  if (ssrf.calls().length) console.log(`\nSSRF endpoint was called by the target: ${JSON.stringify(ssrf.calls())}`);
  if (proxy.counts.serverErrors.length) {
    const unique = [...new Set(proxy.counts.serverErrors)];
    console.log(`\n5xx answers (${proxy.counts.serverErrors.length}): ${unique.slice(0, 40).join("; ")}`);
  }
  if (proxy.counts.failed.length) {
    const unique = [...new Set(proxy.counts.failed)];
    console.log(`\nno answer (${proxy.counts.failed.length}): ${unique.slice(0, 20).join("; ")}`);
  }
  if (proxy.counts.blocked.size)
    console.log(`kept from the app by the bench (403, not forwarded): ${statusLine(proxy.counts.blocked)}`);
  if (proxy.counts.refused) console.log(`requests to other destinations refused by the proxy: ${proxy.counts.refused}`);
  // Remix's "no route matches" and "no action" answers reach handleError and are logged as errors.
  const routing = app.errors.filter((line) => /ErrorResponseImpl/.test(line));
  const other = [...new Set(app.errors.filter((line) => !/ErrorResponseImpl/.test(line)))];
  if (routing.length) console.log(`\napp log: ${routing.length} [error] lines for 404/405 answers (ErrorResponseImpl)`);
  if (other.length) {
    console.log(`app log: ${other.length} other error lines (first 20):`);
    for (const line of other.slice(0, 20)) console.log(`  ${line}`);
  }
}
