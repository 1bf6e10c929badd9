import { spawn } from "node:child_process";
import { once } from "node:events";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnv } from "~/services/config/config.server";
import { freePort, received, setUpLogShipping, withText, type Entry } from "../support/log-shipping";

// ASVS 16.4.3 (ADR 0023): with LOG_SYSLOG_URL every entry a process writes to stdout/stderr also goes to a collector
// on another machine, as RFC 5424 syslog over TLS (RFC 5425). The processes here log as server/index.mjs and the worker
// do (tests/support/log-ship-child.mjs: the structured console and the shipper, no app); the collector is a real TLS
// server with a certificate from a test CA made by openssl (tests/support/syslog-collector.ts). What happens when the
// connection stalls or breaks: log-shipping-stalls.test.ts.

const shipping = setUpLogShipping();
const { collector, start } = shipping;

describe("log shipping to a syslog collector (LOG_SYSLOG_URL)", () => {
  it("sends every entry as an RFC 5424 message in an octet-counted frame over TLS, MSG the entry's JSON line", async () => {
    const logs = await collector(shipping.ca);
    const app = start({
      LOG_SYSLOG_URL: `tls://127.0.0.1:${logs.port}`,
      LOG_SYSLOG_CA_FILE: shipping.ca.caFile,
      INSTANCE_NAME: "app-a",
    });
    app.log({ level: "info", msg: "[boot] ready" });
    app.log({ level: "warn", msg: "[jobs] Übertragung fehlgeschlagen\nzweite Zeile", request_id: "req-5f0c2a9e" });
    app.log({ level: "error", msg: "[api] unexpected" });
    app.log({ level: "debug", msg: "[db] detail" });
    await received(logs, "[db] detail");
    // What the process is stopped with is still shipped before it exits.
    app.log({ level: "info", msg: "[server] last entry before the stop" });
    expect(await app.exit(0)).toBe(0);
    await received(logs, "[server] last entry before the stop");

    expect(logs.framingErrors).toEqual([]);
    const severities = { "[boot] ready": 6, "[jobs] Übertragung": 4, "[api] unexpected": 3, "[db] detail": 7 };
    for (const [text, severity] of Object.entries(severities)) {
      const message = withText(logs.messages, text);
      // The very line written to stdout/stderr, byte for byte; no BOM.
      const line = app.lines.find((written) => written.includes(JSON.stringify(text).slice(1, -1)));
      expect(message).toEqual({
        facility: 16,
        severity,
        version: 1,
        timestamp: (JSON.parse(line!) as Entry).time,
        hostname: os.hostname(),
        appName: "skribent",
        procId: String(app.child.pid),
        msgId: "-",
        structuredData: "-",
        msg: line,
      });
    }
    const warned = JSON.parse(withText(logs.messages, "[jobs]").msg) as Entry;
    expect(warned).toMatchObject({ level: "warn", instance: "app-a", request_id: "req-5f0c2a9e" });
    expect(warned.msg).toBe("[jobs] Übertragung fehlgeschlagen\nzweite Zeile");
    // Every entry the process wrote reached the collector (stdout and stderr arrive here through two pipes: unordered).
    expect(logs.messages.map((message) => message.msg).sort()).toEqual([...app.lines].sort());
  });

  it("sends nothing to a collector whose certificate it cannot verify, and the process logs on", async () => {
    const impostor = await collector(shipping.otherCa);
    const url = `tls://127.0.0.1:${impostor.port}`;
    const app = start(
      { LOG_SYSLOG_URL: url, LOG_SYSLOG_CA_FILE: shipping.ca.caFile },
      { minBackoffMs: 20, maxBackoffMs: 50 },
    );
    app.log({ level: "info", msg: "[boot] ready" });
    const refused = await app.written("[log-ship] cannot send");
    expect(refused).toMatchObject({ level: "warn" });
    expect(refused.msg).toMatch(/^\[log-ship\] cannot send log entries to tls:\/\/127\.0\.0\.1:\d+ \(\w+\): queued/);
    // It keeps trying (with backoff), and keeps logging to stdout meanwhile.
    await impostor.waitFor(() => impostor.refusedHandshakes >= 2, "a second handshake attempt");
    app.log({ level: "info", msg: "[api] still logging" });
    await app.written("[api] still logging");
    expect(await app.exit(0)).toBe(0);
    expect(impostor.messages).toEqual([]);
    expect(impostor.bytesAfterHandshake).toBe(0);

    // Control: the same collector, trusted through NODE_EXTRA_CA_CERTS (with Node's own CAs), gets the entries — the
    // only reason for the refusal was the certificate.
    const trusting = start({ LOG_SYSLOG_URL: url, NODE_EXTRA_CA_CERTS: shipping.otherCa.caFile });
    trusting.log({ level: "info", msg: "[boot] trusted" });
    await received(impostor, "[boot] trusted");
    expect(await trusting.exit(0)).toBe(0);
  });

  it("keeps the newest entries while the collector is down, and first tells it how many were dropped", async () => {
    const port = await freePort();
    const app = start(
      { LOG_SYSLOG_URL: `tls://127.0.0.1:${port}`, LOG_SYSLOG_CA_FILE: shipping.ca.caFile },
      { maxEntries: 5, minBackoffMs: 20, maxBackoffMs: 100 },
    );
    app.log({ level: "info", msg: "[boot] ready" });
    await app.written("[log-ship] cannot send");
    for (let n = 1; n <= 10; n++) app.log({ level: "info", msg: `[jobs] entry ${n}` });
    await app.written("[jobs] entry 10");

    const logs = await collector(shipping.ca, port);
    await received(logs, "[log-ship] sending log entries to");
    // 12 entries were queued ("ready", the refusal, 1–10): the 7 oldest went, the notice comes first.
    const [notice, ...rest] = logs.messages.map((message) => JSON.parse(message.msg) as Entry);
    expect(notice).toMatchObject({
      level: "warn",
      dropped: 7,
      msg: expect.stringMatching(/^\[log-ship\] 7 log entries were dropped/),
    });
    expect(logs.messages[0].severity).toBe(4);
    expect(rest.map((entry) => entry.msg)).toEqual([
      "[jobs] entry 6",
      "[jobs] entry 7",
      "[jobs] entry 8",
      "[jobs] entry 9",
      "[jobs] entry 10",
      expect.stringMatching(/^\[log-ship\] sending log entries to tls:\/\/127\.0\.0\.1:\d+$/),
    ]);
    // stdout lost nothing meanwhile.
    expect(app.entries().filter((entry) => entry.msg.startsWith("[jobs] entry"))).toHaveLength(10);
    expect(await app.exit(0)).toBe(0);
  });
});

describe("a wrong LOG_SYSLOG_URL", () => {
  it("stops `node server/index.mjs` before it boots, naming the variable but not its value", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ LOG_SYSLOG_URL: "http://logs.example:514" }, "LOG_SYSLOG_URL: must be tls://host:port"],
      [{ LOG_SYSLOG_URL: "tcp://logs.example:514" }, "LOG_SYSLOG_URL: tcp:// (unencrypted) is allowed only to"],
      [{ LOG_SYSLOG_URL: "logs.example 514" }, "LOG_SYSLOG_URL: must be a URL like tls://logs.example:6514"],
      [{ LOG_SYSLOG_URL: "tls://ops:s3cr3t-token@logs.example:6514" }, "LOG_SYSLOG_URL: must be only tls://host:port"],
      [
        { LOG_SYSLOG_URL: "tls://logs.example", LOG_SYSLOG_CA_FILE: path.join(os.tmpdir(), "missing-ca.pem") },
        "LOG_SYSLOG_CA_FILE: ",
      ],
    ];
    for (const [env, problem] of cases) {
      const message = await refusal(env);
      expect(message).toContain(problem);
      expect(message).not.toContain("s3cr3t-token");
    }
  });

  it("is refused by the boot's configuration check too (the worker's), and tcp:// is fine to localhost", () => {
    expect(() => parseEnv({ LOG_SYSLOG_URL: "tcp://logs.example:514" })).toThrow(/LOG_SYSLOG_URL: tcp:\/\//);
    expect(() => parseEnv({ LOG_SYSLOG_URL: "udp://logs.example:514" })).toThrow(/LOG_SYSLOG_URL/);
    expect(parseEnv({ LOG_SYSLOG_URL: "tcp://127.0.0.1:514" }).LOG_SYSLOG_URL).toBe("tcp://127.0.0.1:514");
    expect(parseEnv({ LOG_SYSLOG_URL: "tls://logs.klinik.example:6514" }).LOG_SYSLOG_URL).toBeDefined();
  });
});

/** What `node server/index.mjs` says when it refuses these settings: its one error line's message, checked for shape. */
async function refusal(env: Record<string, string>) {
  const child = spawn(process.execPath, ["server/index.mjs"], {
    env: { PATH: process.env.PATH, NODE_ENV: "production", LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const [code] = await once(child, "exit");
  const lines = stderr.trim().split("\n");
  expect([env, code, lines.length]).toEqual([env, 1, 1]);
  const entry = JSON.parse(lines[0]) as Entry;
  expect(entry.level).toBe("error");
  expect(entry.msg).toMatch(/^Invalid configuration:\n {2}- /);
  expect(entry.msg).not.toMatch(/\n\s+at |Error:/);
  return entry.msg;
}
