#!/usr/bin/env node
// Log hygiene (issue 9): no line the app logged during the suite may hold a credential, a signed URL, a
// patient id or users' content. scripts/test.mjs collects the logs (tests/setup/log-capture.ts for vitest,
// tests/setup/log-capture-reporter.ts for Playwright's web servers) and runs this after the tests:
//   node scripts/log-hygiene.mjs [file or directory …]      (default: test-results/app-logs.txt)
// A directory means its *.log files. A line is "<source>\t<text>"; only the text is scanned. Exit 1 lists the
// offending lines with what was found masked, so the report itself leaks nothing.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { loadTestSupport } from "./fake-speech-bundle.mjs";

export const DEFAULT_LOG_FILE = "test-results/app-logs.txt";
/** The session cookie's name (app/services/web/session.server.ts). */
export const SESSION_COOKIE = "skribent_sid";
/** The query parameter holding a local signed URL's HMAC (app/services/storage/local-signing.server.ts). */
export const LOCAL_SIGNATURE_PARAM = "sig";
const MASK = "***";
/** Enough to act on; the rest are counted. */
const MAX_REPORTED = 50;

/** What a query value or header value runs to: up to whitespace, a quote, a separator or a closing brace. */
const VALUE = String.raw`[^\s"'&;,}#]+`;

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The checks, each a global pattern whose `secret` group is the part to mask.
 * @param {{ phrases: string[], words: string[], patientId: RegExp }} canaries content from tests/support/log-canaries.ts
 * @returns {Array<{ name: string, pattern: RegExp }>}
 */
export function buildRules(canaries) {
  const rules = [
    // Three base64url parts, the first a JSON object ("{" is "eyJ"): a JWT, whatever it authorises.
    { name: "JWT", pattern: /(?<secret>\beyJ[\w-]{6,}\.[\w-]{6,}\.[\w-]*)/g },
    // A token has a digit or a mark in it; "bearer token" in a sentence does not.
    { name: "Bearer token", pattern: /\bbearer[ \t]+(?<secret>(?=[\w.~+/=-]*[\d.~+/=-])[\w.~+/=-]{8,})/gi },
    {
      name: "Authorization header",
      pattern: new RegExp(
        String.raw`\b(?:proxy-authorization|authorization|x-authentication)["']?[ \t]*[:=][ \t]*["']?(?<secret>${VALUE}(?:[ \t]+${VALUE})?)`,
        "gi",
      ),
    },
    { name: "session cookie", pattern: new RegExp(String.raw`\b${SESSION_COOKIE}=(?<secret>${VALUE})`, "g") },
    {
      name: "signed URL (S3)",
      pattern: new RegExp(
        String.raw`(?<![\w-])X-Amz-(?:Signature|Credential|Security-Token)=(?<secret>${VALUE})`,
        "gi",
      ),
    },
    {
      name: "signed URL (local store)",
      pattern: new RegExp(String.raw`[?&]${LOCAL_SIGNATURE_PARAM}=(?<secret>${VALUE})`, "g"),
    },
    { name: "jwt= in a query", pattern: new RegExp(String.raw`[?&]jwt=(?<secret>${VALUE})`, "gi") },
    { name: "patient id", pattern: new RegExp(`(?<secret>${canaries.patientId.source})`, "g") },
  ];
  if (canaries.phrases.length > 0) {
    const phrases = [...canaries.phrases].sort((a, b) => b.length - a.length).map(escape);
    rules.push({ name: "content", pattern: new RegExp(`(?<secret>${phrases.join("|")})`, "giu") });
  }
  if (canaries.words.length > 0) {
    const words = canaries.words.map(escape).join("|");
    rules.push({
      name: "content",
      pattern: new RegExp(`(?<![\\p{L}\\p{N}_])(?<secret>${words})(?![\\p{L}\\p{N}_])`, "giu"),
    });
  }
  return rules;
}

/**
 * The lines that break a rule, masked.
 * @param {string[]} lines "<source>\t<text>" (a line without a tab is all text)
 * @param {Array<{ name: string, pattern: RegExp }>} rules from buildRules
 * @returns {Array<{ line: number, source: string, rules: string[], masked: string }>}
 */
export function scanLines(lines, rules) {
  const findings = [];
  lines.forEach((raw, index) => {
    const tab = raw.indexOf("\t");
    const source = tab >= 0 ? raw.slice(0, tab) : "";
    let masked = withDecodedEntry(tab >= 0 ? raw.slice(tab + 1) : raw);
    const broken = [];
    for (const { name, pattern } of rules) {
      pattern.lastIndex = 0;
      if (!pattern.test(masked)) continue;
      if (!broken.includes(name)) broken.push(name);
      masked = masked.replace(pattern, (match, ...rest) => match.replace(rest.at(-1).secret, MASK));
    }
    if (broken.length > 0) findings.push({ line: index + 1, source, rules: broken, masked });
  });
  return findings;
}

/**
 * A JSON entry (server/log.mjs) is scanned as written and with its strings decoded: an escaped quote, line break or
 * \u sequence inside a message must not hide what it spells.
 * @param {string} text
 */
export function withDecodedEntry(text) {
  if (!text.startsWith("{")) return text;
  try {
    const entry = JSON.parse(text);
    const strings = Object.values(entry).filter((value) => typeof value === "string");
    return strings.length > 0 ? `${text}\t${strings.join("\t")}` : text;
  } catch {
    return text;
  }
}

/** The canaries, bundled from the TypeScript fixtures so this script runs on plain Node. */
export async function loadCanaries() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-log-canaries-"));
  try {
    const module = await loadTestSupport("log-canaries", dir);
    return { phrases: module.CONTENT_PHRASES, words: module.CONTENT_WORDS, patientId: module.PATIENT_ID_PATTERN };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function logFiles(input) {
  if (!fs.existsSync(input)) throw new Error(`${input}: no such file — were the logs captured?`);
  if (!fs.statSync(input).isDirectory()) return [input];
  return fs
    .readdirSync(input)
    .filter((name) => name.endsWith(".log"))
    .sort()
    .map((name) => path.join(input, name));
}

async function main(inputs) {
  const files = (inputs.length > 0 ? inputs : [DEFAULT_LOG_FILE]).flatMap(logFiles);
  const rules = buildRules(await loadCanaries());
  let scanned = 0;
  const findings = [];
  for (const file of files) {
    const lines = fs.readFileSync(file, "utf8").split("\n");
    if (lines.at(-1) === "") lines.pop();
    scanned += lines.length;
    findings.push(...scanLines(lines, rules).map((finding) => ({ ...finding, file })));
  }
  const where = `${scanned} line${scanned === 1 ? "" : "s"} of ${files.length === 1 ? files[0] : `${files.length} files`}`;
  if (findings.length === 0) {
    console.log(`log hygiene: ${where}: no secrets, signed URLs, patient ids or content`);
    return 0;
  }
  console.log(`log hygiene: ${findings.length} of ${where} hold what no log may (masked as ${MASK}):`);
  for (const { file, line, source, rules: names, masked } of findings.slice(0, MAX_REPORTED)) {
    console.log(`  ${file}:${line} [${names.join(", ")}] ${source ? `${source}: ` : ""}${masked}`);
  }
  if (findings.length > MAX_REPORTED) console.log(`  … and ${findings.length - MAX_REPORTED} more`);
  return 1;
}

// Run as a command (not imported by the test); the real path, since Node resolves a symlinked script to it.
if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(`log hygiene: ${error instanceof Error ? error.message : error}`);
      process.exit(1);
    },
  );
}
