// wapiti: one crawl and attack of everything reachable from the workspace, through the counting proxy, which keeps
// it from what would end the scan (wapitiGuard); its JSON report read back.
import fs from "node:fs";
import path from "node:path";
import { APP, opts } from "./config.mjs";
import { delta } from "./proxy.mjs";
import { runTool } from "./tools.mjs";

/**
 * What wapiti may not do: sign out (the scan's session would end), delete the account, leave for the provider's
 * sign-in, and — while crawling, when it posts every form with the values it found — delete or reset the seeded
 * recording, transcript, letter or template, which would leave the rest of the scan nothing to attack. A form
 * wapiti has put a payload into does not carry the seeded id unchanged, so every attack still passes.
 */
export function wapitiGuard(ids) {
  const seeded = [ids.recordingKey, ids.letterKey, ids.letterParam, ids.transcriptKey, ids.transcriptParam];
  const isSeeded = (value) => seeded.some((id) => value === id || value.endsWith(`/${id}`));
  return (url, form) => {
    if (/^\/logout(\/|$)/.test(url.pathname)) return "sign-out";
    if (/^\/settings\/account(\/|$)/.test(url.pathname)) return "account deletion";
    if (/^\/auth\//.test(url.pathname)) return "sign-in at the provider";
    if (/^\/settings\/remove\//.test(url.pathname) && url.pathname.endsWith(`/${ids.templateId}`) && form)
      return "keeps the seeded template";
    const path = decodeURIComponent(url.pathname);
    if (form && ["delete", "reset"].includes(form.get("intent") ?? "") && [path, ...form.values()].some(isSeeded))
      return "keeps the seeded data";
    return null;
  };
}

export async function runWapiti({ ids, cookie, proxy, ssrf, work, reportDir }) {
  const cookieFile = path.join(work, "wapiti-cookies.json");
  const jar = {};
  for (const pair of cookie.split("; ")) {
    const [name, ...rest] = pair.split("=");
    jar[name] = { value: rest.join("="), version: 0, expires: null, secure: false, port: null };
  }
  // wapiti keys cookies of a dot-less host under ".<host>.local" (its jsoncookie module).
  fs.writeFileSync(cookieFile, JSON.stringify({ ".localhost.local": { "/": jar } }));
  const report = path.join(work, "wapiti.json");
  const modules =
    "xss,permanentxss,sql,blindsql,exec,file,crlf,redirect,ssrf,csrf,backup,htaccess,methods,cookieflags,csp,http_headers";
  const args = [
    "-u",
    `${APP}/`,
    "--scope",
    "folder",
    "-c",
    cookieFile,
    "-m",
    modules,
    "--max-scan-time",
    opts["wapiti-scan-time"],
    "--max-attack-time",
    opts["wapiti-attack-time"],
    "--flush-session",
    "--store-session",
    path.join(work, "wapiti-session"),
    "--store-config",
    path.join(work, "wapiti-config"),
    "--endpoint",
    ssrf.url,
    "-p",
    `${proxy.url}/`,
    // Debian's wapiti announces brotli without a brotli decoder: it would see compressed bytes and find no links.
    "-H",
    "Accept-Encoding: gzip, deflate",
    "-t",
    "30",
    "-f",
    "json",
    "-o",
    report,
    "--no-bugreport",
    "-v",
    "1",
  ];
  proxy.guard = wapitiGuard(ids);
  const logFile = reportDir ? path.join(reportDir, "wapiti.log") : undefined;
  if (logFile) fs.writeFileSync(logFile, `$ wapiti ${args.map((a) => JSON.stringify(a)).join(" ")}\n\n`);
  const before = proxy.snapshot();
  const started = performance.now();
  const budget = (Number(opts["wapiti-scan-time"]) + 16 * Number(opts["wapiti-attack-time"]) + 300) * 1000;
  const result = await runTool("wapiti", args, { timeoutMs: budget, logFile });
  const seconds = (performance.now() - started) / 1000;
  const counted = delta(before, proxy.snapshot());
  proxy.guard = undefined;
  if (!fs.existsSync(report)) return { ran: false, seconds, ...counted, code: result.code, output: result.output };
  if (reportDir) fs.copyFileSync(report, path.join(reportDir, "wapiti.json"));
  const data = JSON.parse(fs.readFileSync(report, "utf8"));
  const findings = [];
  for (const section of ["vulnerabilities", "anomalies", "additionals"])
    for (const [category, list] of Object.entries(data[section] ?? {}))
      for (const item of list)
        findings.push({
          section,
          category,
          request: String(item.http_request ?? `${item.method} ${item.path}`).split("\n")[0],
          // Forms of one address differ by their intent field (urlencoded or multipart).
          intent: /(?:^|[&\n])intent=([^&\n]+)|name="intent"\r?\n\r?\n([^\r\n]+)/
            .exec(item.http_request ?? "")
            ?.slice(1)
            .find(Boolean),
          parameter: item.parameter,
          info: String(item.info ?? "").split("\n")[0],
          level: item.level,
        });
  const crawled = /(\d+) URLs? and forms? (?:have been|were) (?:found|crawled)/i.exec(result.output)?.[1];
  return {
    ran: true,
    seconds,
    ...counted,
    code: result.code,
    findings,
    infos: data.infos,
    crawled,
    output: result.output,
  };
}
