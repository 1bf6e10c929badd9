// LOG_SYSLOG_URL (ASVS 16.4.3, ADR 0023): every entry server/log.mjs writes to stdout/stderr is also sent to a log
// collector on another machine, as an RFC 5424 syslog message over TLS (RFC 5425: octet-counting framing
// `MSGLEN SP SYSLOG-MSG`), so that an intruder on an instance cannot erase what it already logged. The collector's
// certificate is verified (Node's CAs and NODE_EXTRA_CA_CERTS, or only LOG_SYSLOG_CA_FILE's); tcp:// is for a relay
// on this machine only. The app never waits for the collector: entries queue in memory (bounded, the oldest dropped
// and counted), the connection is retried with backoff, and stdout/stderr logging goes on as before. Read by
// server/index.mjs and the worker before anything else, like TLS_CERT_FILE: a wrong setting stops the start with the
// boot's readable list, naming the variable and never echoing its value.
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import tls from "node:tls";
import { createFrameQueue, syslogFrame, syslogHostname } from "./log-ship-queue.mjs";
import { formatLogLine, setLogShipper } from "./log.mjs";

export class LogShipSettingsError extends Error {
  /** @param {string[]} problems */
  constructor(problems) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.problems = problems;
  }
}

const DEFAULT_PORTS = { "tls:": 6514, "tcp:": 514 };
// As config/transport.server.ts: plain connections to these never leave the machine.
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * What is wrong with a LOG_SYSLOG_URL value, or undefined. The value itself is never repeated: it may hold a secret.
 * @param {string} value
 */
export function syslogUrlProblem(value) {
  let url;
  try {
    url = new URL(value);
  } catch {
    return "must be a URL like tls://logs.example:6514";
  }
  if (url.protocol === "tcp:" && !LOOPBACK.has(url.hostname))
    return "tcp:// (unencrypted) is allowed only to localhost: use tls:// for a collector on another machine";
  if (!(url.protocol in DEFAULT_PORTS)) return "must be tls://host:port (syslog over TLS; tcp:// only to localhost)";
  if (!url.hostname) return "must name the collector's host, like tls://logs.example:6514";
  if (url.username || url.password || (url.pathname && url.pathname !== "/") || url.search || url.hash)
    return "must be only tls://host:port (no user, password, path or query)";
  return undefined;
}

/**
 * The collector from LOG_SYSLOG_URL (and LOG_SYSLOG_CA_FILE), checked; undefined when LOG_SYSLOG_URL is unset.
 * Throws LogShipSettingsError. Empty values count as unset.
 * @param {Record<string, string | undefined>} [env]
 * @returns {{ host: string, port: number, secure: boolean, ca?: Buffer } | undefined}
 */
export function readLogShipSettings(env = process.env) {
  const value = env.LOG_SYSLOG_URL || undefined;
  const caFile = env.LOG_SYSLOG_CA_FILE || undefined;
  if (!value) {
    if (caFile) throw new LogShipSettingsError(["LOG_SYSLOG_CA_FILE: is used only with LOG_SYSLOG_URL"]);
    return undefined;
  }
  const problem = syslogUrlProblem(value);
  if (problem) throw new LogShipSettingsError([`LOG_SYSLOG_URL: ${problem}`]);
  const url = new URL(value);
  const secure = url.protocol === "tls:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[/** @type {"tls:" | "tcp:"} */ (url.protocol)];
  if (!caFile) return { host, port, secure };
  if (!secure) throw new LogShipSettingsError(["LOG_SYSLOG_CA_FILE: is used only with a tls:// LOG_SYSLOG_URL"]);
  let ca;
  try {
    ca = fs.readFileSync(caFile);
  } catch (error) {
    const code = /** @type {{ code?: string }} */ (error).code ?? String(error);
    throw new LogShipSettingsError([`LOG_SYSLOG_CA_FILE: ${caFile} cannot be read (${code})`]);
  }
  try {
    new X509Certificate(ca);
  } catch {
    throw new LogShipSettingsError([`LOG_SYSLOG_CA_FILE: ${caFile} holds no PEM certificate`]);
  }
  return { host, port, secure, ca };
}

/**
 * Sends entries to the collector over one connection, kept open and opened again after a backoff; never throws and
 * never waits. `send` queues; `flush` waits (up to `timeoutMs`) until the queue is handed to the kernel; `close`
 * flushes and hangs up. A connection that makes no progress for `progressTimeoutMs` — a handshake that never ends,
 * or writes the kernel cannot take because the collector stopped reading — is destroyed and opened again; the entries
 * whose writes it had not completed are sent again over the next one (at least once, so possibly twice).
 * @param {{ host: string, port: number, secure: boolean, ca?: Buffer, format?: string, instance?: string,
 *   hostname?: string, pid?: number, maxEntries?: number, maxBytes?: number, minBackoffMs?: number,
 *   maxBackoffMs?: number, progressTimeoutMs?: number }} options
 */
export function createSyslogShipper({
  host,
  port,
  secure,
  ca,
  format = process.env.LOG_FORMAT,
  instance = process.env.INSTANCE_NAME,
  hostname = syslogHostname(os.hostname()),
  pid = process.pid,
  maxEntries = 10_000,
  maxBytes = 4 * 1024 * 1024,
  minBackoffMs = 1000,
  maxBackoffMs = 30_000,
  progressTimeoutMs = 30_000,
}) {
  // Only host and port are ever logged: never the URL as configured.
  const where = `${secure ? "tls" : "tcp"}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  const textFormat = format === "text";
  const queue = createFrameQueue({ maxEntries, maxBytes });
  /**
   * The current connection's frames written but not done yet (their write callbacks not called), oldest first: when
   * it breaks they are put back in the queue, to be sent again.
   * @type {Buffer[]}
   */
  let unacknowledged = [];
  /** @type {net.Socket | undefined} */
  let socket;
  /**
   * The current connection's watchdog: armed while it connects and while writes wait, reset by each one done.
   * @type {NodeJS.Timeout | undefined}
   */
  let stall;
  let up = false;
  let reported = false;
  let closed = false;
  let backoff = minBackoffMs;
  /** @type {NodeJS.Timeout | undefined} */
  let retry;
  /** @type {Set<() => void>} */
  const idle = new Set();

  // Entries about the shipping itself go through the console (stdout/stderr, and queued like any other), later:
  // never from inside a console call.
  const report = (/** @type {"info" | "warn"} */ level, /** @type {string} */ msg) =>
    setImmediate(() => console[level](msg));

  const frame = (/** @type {string} */ level, /** @type {string} */ line, /** @type {Date} */ time) =>
    syslogFrame({ level, line, time, hostname, pid });

  /** (Re)starts the watchdog of `on`: unless something progresses within progressTimeoutMs, it is destroyed. */
  function watch(/** @type {net.Socket} */ on) {
    clearTimeout(stall);
    stall = setTimeout(() => {
      const error = Object.assign(new Error(`no progress for ${progressTimeoutMs} ms`), { code: "ETIMEDOUT" });
      on.destroy(error);
    }, progressTimeoutMs).unref();
  }

  const unwatch = () => clearTimeout(stall);

  function pump() {
    // After an outage, or when the collector reads too slowly to keep up, the first entry it gets says what it lost.
    if (up && queue.dropped > 0) {
      const dropped = queue.takeDropped();
      const msg = `[log-ship] ${dropped} log entries were dropped while the collector was unreachable or slow`;
      const time = new Date();
      const line = formatLogLine({
        format: textFormat ? "text" : "json",
        time,
        level: "warn",
        msg,
        fields: { instance, dropped },
      });
      queue.unshift(frame("warn", line, time));
    }
    // Not into a destroyed socket, whose writes fail at once: that would empty the whole queue before it closes.
    while (up && socket?.writable && queue.length > 0 && socket.writableLength < 64 * 1024) {
      const entry = /** @type {Buffer} */ (queue.shift());
      // The first write to wait starts the watchdog; more writes do not put it off, only completed ones do.
      if (unacknowledged.length === 0) watch(socket);
      const sentOn = socket;
      const pending = unacknowledged;
      pending.push(entry);
      sentOn.write(entry, (error) => {
        // A failed write, or one done after its connection closed, stays unacknowledged: it was put back in the queue
        // when the connection closed. A stream calls back its writes in order, so this one is the oldest pending.
        if (error || sentOn !== socket) return;
        pending.shift();
        if (pending.length > 0) watch(sentOn);
        else unwatch();
        pump();
      });
    }
    if (queue.length === 0 && unacknowledged.length === 0) for (const resolve of idle) resolve();
  }

  function connect() {
    retry = undefined;
    if (closed) return;
    const servername = net.isIP(host) ? undefined : host;
    const options = { host, port, ...(ca ? { ca } : {}) };
    const next = secure ? tls.connect({ ...options, servername, minVersion: "TLSv1.2" }) : net.connect(options);
    socket = next;
    next.unref();
    next.setKeepAlive(true, 30_000);
    // A collector that accepts the connection but never completes the handshake holds it up no longer than a write.
    watch(next);
    /** @type {Error | undefined} */
    let failure;
    next.once(secure ? "secureConnect" : "connect", () => {
      unwatch();
      up = true;
      reported = false;
      backoff = minBackoffMs;
      report("info", `[log-ship] sending log entries to ${where}`);
      pump();
    });
    next.on("drain", pump);
    next.on("data", () => {}); // a collector says nothing (RFC 5425 §4.3); whatever it sends is ignored
    next.on("error", (error) => (failure ??= error));
    next.once("close", () => {
      unwatch();
      up = false;
      socket = undefined;
      // At least once: what the kernel had not taken yet goes again after the reconnection (what it had taken may be
      // lost — syslog has no acknowledgements — and what the collector got before the break may arrive twice).
      if (!closed) queue.putBack(unacknowledged);
      unacknowledged = [];
      pump(); // what waits for the queue to empty learns that these writes are done with
      if (closed) return;
      if (!reported) {
        reported = true;
        const code = /** @type {{ code?: string }} */ (failure ?? {}).code ?? "closed";
        report("warn", `[log-ship] cannot send log entries to ${where} (${code}): queued, retrying`);
      }
      retry = setTimeout(connect, backoff).unref();
      backoff = Math.min(backoff * 2, maxBackoffMs);
    });
  }

  /** @param {number} timeoutMs */
  function flush(timeoutMs) {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        idle.delete(done);
        resolve(queue.length === 0 && unacknowledged.length === 0);
      };
      const timer = setTimeout(done, timeoutMs);
      idle.add(done);
      pump();
    });
  }

  connect();
  return {
    where,
    /**
     * @param {string} level
     * @param {string} line
     * @param {Date} time
     */
    send(level, line, time) {
      if (closed) return;
      queue.push(frame(level, line, time));
      pump();
    },
    flush,
    /** Counts (tests, diagnostics): connected, queued, written but not done, put back to be sent again so far. */
    state: () => ({ connected: up, queued: queue.length, unacknowledged: unacknowledged.length, resent: queue.resent }),
    /** @param {number} timeoutMs */
    async close(timeoutMs) {
      const flushed = await flush(timeoutMs);
      closed = true;
      clearTimeout(retry);
      socket?.end();
      return flushed;
    },
  };
}

/**
 * Reads LOG_SYSLOG_URL and, when set, hands every entry of the installed console to a shipper as well. Undefined
 * when unset; throws LogShipSettingsError for a wrong setting. `options` override the shipper's (tests).
 * @param {Record<string, string | undefined>} [env]
 * @param {Partial<Parameters<typeof createSyslogShipper>[0]>} [options]
 */
export function startLogShipping(env = process.env, options = {}) {
  const settings = readLogShipSettings(env);
  if (!settings) return undefined;
  const shipper = createSyslogShipper({ format: env.LOG_FORMAT, instance: env.INSTANCE_NAME, ...settings, ...options });
  setLogShipper(shipper.send);
  return {
    ...shipper,
    /** Sends what is queued (waiting at most `timeoutMs`), then stops shipping. @param {number} timeoutMs */
    async close(timeoutMs) {
      const flushed = await shipper.close(timeoutMs);
      setLogShipper(undefined);
      return flushed;
    },
  };
}
