// What the app processes write to stdout and stderr (ASVS 16.2.1, 16.2.2, 16.2.4, 16.4.1; ADR 0019): one line per
// entry, each with its time in UTC, its level, the instance and, while a request is answered, the request's id —
// the id its audit rows carry, which names the user. Every console call of server/index.mjs and the stand-alone worker
// goes through here, so the app's ~110 console calls need no logger of their own.
//   LOG_FORMAT=json (default)   {"time":"2026-11-26T19:00:00.000Z","level":"info","request_id":"…","msg":"…"}
//   LOG_FORMAT=text             2026-11-26T19:00:00.000Z INFO  request_id=… …
// Whatever a message holds — an error's stack, a file name, an engine's answer — cannot start a line of its own or
// forge one: line breaks and other control characters are escaped in both formats (log injection, 16.4.1).
import { AsyncLocalStorage } from "node:async_hooks";
import { formatWithOptions } from "node:util";

export const LOG_FORMATS = /** @type {const} */ (["json", "text"]);

/** @typedef {{ request_id?: string }} LogContext */
/** @type {AsyncLocalStorage<LogContext>} */
const context = new AsyncLocalStorage();

/**
 * Runs `fn` with `fields` added to every entry written while it (and what it started) runs.
 * @template T
 * @param {LogContext} fields
 * @param {() => T} fn
 */
export function withLogContext(fields, fn) {
  return context.run(fields, fn);
}

/** Console method → level; `log` is `info`. */
const LEVELS = /** @type {const} */ ({ debug: "debug", log: "info", info: "info", warn: "warn", error: "error" });

const ESCAPES = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\" };
const unicodeEscape = (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * A message as one line: C0 and C1 controls, DEL and the Unicode line/paragraph separators escaped, and the
 * backslash, so that an escape written by an attacker cannot pass for one written here.
 * @param {string} text
 */
export function escapeLogText(text) {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/g, (char) => ESCAPES[char] ?? unicodeEscape(char));
}

/**
 * One entry as the line written for it (without the line break).
 * @param {{ format: (typeof LOG_FORMATS)[number], time: Date, level: string, msg: string, fields?: Record<string, unknown> }} entry
 */
export function formatLogLine({ format, time, level, msg, fields = {} }) {
  const present = Object.entries(fields).filter(([, value]) => value !== undefined && value !== null);
  if (format === "text") {
    const pairs = present.map(([key, value]) => `${key}=${escapeLogText(String(value)).replace(/ /g, "\\u0020")}`);
    return [time.toISOString(), level.toUpperCase().padEnd(5), ...pairs, escapeLogText(msg)].join(" ");
  }
  // JSON.stringify escapes C0 controls, quotes and backslashes; DEL, C1 and U+2028/2029 are valid in JSON strings
  // but end a line for some readers.
  const json = JSON.stringify({ time: time.toISOString(), level, ...Object.fromEntries(present), msg });
  return json.replace(/[\u007f-\u009f\u2028\u2029]/g, unicodeEscape);
}

/**
 * Replaces console.log/info/debug (to stdout) and console.warn/error (to stderr) with structured entries.
 * Returns a function that puts the original methods back (tests).
 * @param {{ format?: string, instance?: string, stdout?: { write(text: string): unknown }, stderr?: { write(text: string): unknown }, now?: () => Date }} [options]
 */
export function installStructuredConsole({
  format = process.env.LOG_FORMAT,
  instance = process.env.INSTANCE_NAME,
  stdout = process.stdout,
  stderr = process.stderr,
  now = () => new Date(),
} = {}) {
  // Anything but "text" is JSON: config/config.server.ts refuses other values before the app starts.
  const chosen = format === "text" ? "text" : "json";
  const write = (level, msg, fields) => {
    const stream = level === "warn" || level === "error" ? stderr : stdout;
    const all = { instance, ...context.getStore(), ...fields };
    const time = now();
    const line = formatLogLine({ format: chosen, time, level, msg, fields: all });
    stream.write(`${line}\n`);
    shipper?.(level, line, time);
  };
  const originals = new Map();
  for (const [method, level] of Object.entries(LEVELS)) {
    originals.set(method, console[method]);
    console[method] = (...args) => write(level, formatWithOptions({ colors: false }, ...args));
  }
  writer = write;
  return () => {
    for (const [method, original] of originals) console[method] = original;
    if (writer === write) writer = undefined;
  };
}

/** @type {((level: string, msg: string, fields: Record<string, unknown>) => void) | undefined} */
let writer;

/** @type {((level: string, line: string, time: Date) => void) | undefined} */
let shipper;

/**
 * Hands every entry written from now on, as its line, to `ship` as well (LOG_SYSLOG_URL, server/log-ship.mjs);
 * undefined stops that. `ship` must neither throw nor wait.
 * @param {((level: string, line: string, time: Date) => void) | undefined} ship
 */
export function setLogShipper(ship) {
  shipper = ship;
}

/**
 * An entry with fields of its own (the request line's method, path, status…): as fields where the structured
 * console is installed, else as the message alone.
 * @param {"info" | "warn" | "error"} level
 * @param {string} msg
 * @param {Record<string, unknown>} fields
 */
export function logEntry(level, msg, fields) {
  if (writer) writer(level, msg, fields);
  else console[level](msg);
}
