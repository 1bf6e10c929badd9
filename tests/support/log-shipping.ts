import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll } from "vitest";
import { makeInternalCa } from "../../scripts/internal-ca.mjs";
import { startSyslogCollector, type SyslogCollector, type SyslogMessage } from "./syslog-collector";

// What the log shipping tests (ADR 0023) share: a test CA and another one made by openssl, collectors with
// certificates from them (./syslog-collector.ts), and processes that log as server/index.mjs and the worker do
// (./log-ship-child.mjs: the structured console and the shipper, no app). `setUpLogShipping()` registers the hooks that
// make the CAs and stop what a test started.

export type Entry = {
  level: string;
  msg: string;
  time: string;
  request_id?: string;
  instance?: string;
  dropped?: number;
};

/** What server/log-ship.mjs's `state()` tells. */
export type ShipperState = { connected: boolean; queued: number; unacknowledged: number; resent: number };

type Ca = ReturnType<typeof makeInternalCa>;

export function setUpLogShipping() {
  let dir: string;
  let ca: Ca;
  let otherCa: Ca;
  const children: ChildProcessWithoutNullStreams[] = [];
  const collectors: SyslogCollector[] = [];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-log-shipping-"));
    ca = makeInternalCa(path.join(dir, "ca"), { commonName: "Skribent log CA (test)" });
    otherCa = makeInternalCa(path.join(dir, "other-ca"), { commonName: "Someone else's CA (test)" });
  });

  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill();
    for (const collector of collectors.splice(0)) await collector.close();
  });

  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A collector with a certificate for logs.skribent.internal from `issuer`, on `port` (0: any free one). */
  async function collector(issuer: Ca, port = 0) {
    const { certFile, keyFile } = issuer.issue("logs.skribent.internal", { file: `collector-${collectors.length}` });
    const tls = { cert: fs.readFileSync(certFile, "utf8"), key: fs.readFileSync(keyFile, "utf8") };
    const started = await startSyslogCollector({ tls, port });
    collectors.push(started);
    return started;
  }

  /**
   * A logging process: `log` sends it a command, `lines` are the JSON entries it wrote (stdout and stderr). `options`
   * override the shipper's (LOG_SHIP_TEST_OPTIONS: queue size, backoff, timeout), so that a test need not wait 30 s.
   */
  function start(env: Record<string, string>, options: Record<string, number> = {}) {
    const child = spawn(process.execPath, ["tests/support/log-ship-child.mjs"], {
      stdio: ["pipe", "pipe", "pipe", "ipc"],
      env: {
        PATH: process.env.PATH,
        NODE_ENV: "production",
        LOG_FORMAT: "json",
        LOG_SHIP_TEST_OPTIONS: JSON.stringify(options),
        ...env,
      },
    }) as ChildProcessWithoutNullStreams; // stdin, stdout and stderr are pipes; the IPC channel answers `state`
    children.push(child);
    const lines: string[] = [];
    const seen = new EventTarget();
    for (const stream of [child.stdout, child.stderr])
      createInterface({ input: stream }).on("line", (line) => {
        lines.push(line);
        seen.dispatchEvent(new Event("line"));
      });
    return {
      child,
      lines,
      entries: () => lines.map((line) => JSON.parse(line) as Entry),
      log: (command: { level: string; msg: string; request_id?: string }) =>
        child.stdin.write(`${JSON.stringify(command)}\n`),
      exit: async (code = 0) => {
        child.stdin.write(`${JSON.stringify({ exit: code })}\n`);
        const [exitCode] = await once(child, "exit");
        return exitCode as number;
      },
      /** The shipper's counts once the process has done what it was sent before. */
      state: async () => {
        const reply = once(child, "message");
        child.stdin.write(`${JSON.stringify({ state: true })}\n`);
        const [message] = await reply;
        return (message as { state: ShipperState }).state;
      },
      /** Resolves when an entry whose msg contains `text` has been written. */
      written: (text: string) =>
        new Promise<Entry>((resolve, reject) => {
          let scanned = 0;
          const check = () => {
            for (; scanned < lines.length; scanned++) {
              const entry = JSON.parse(lines[scanned]) as Entry;
              if (!entry.msg.includes(text)) continue;
              seen.removeEventListener("line", check);
              clearTimeout(timer);
              resolve(entry);
              return;
            }
          };
          // A bound, not a wait: a hang becomes a failure that says what never came.
          const timer = setTimeout(() => reject(new Error(`the process never wrote "${text}"`)), 15_000);
          seen.addEventListener("line", check);
          check();
        }),
    };
  }

  return {
    get ca() {
      return ca;
    },
    get otherCa() {
      return otherCa;
    },
    collector,
    start,
  };
}

/** Resolves when the collector has received a message containing `text`, among those from the `from`th on. */
export function received(collector: SyslogCollector, text: string, from = 0) {
  let scanned = from;
  return collector.waitFor((messages) => {
    for (; scanned < messages.length; scanned++) if (messages[scanned].msg.includes(text)) return true;
    return false;
  }, `"${text}"`);
}

export const withText = (messages: SyslogMessage[], text: string) =>
  messages.find((message) => message.msg.includes(text))!;

export { freePort } from "./free-port";
