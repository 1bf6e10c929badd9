import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parseEnv, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { createLiveSession } from "~/services/live/sessions.server";
import { escapeLogText, formatLogLine, installStructuredConsole, withLogContext } from "../../server/log.mjs";
import { startServerApp } from "../support/server-app";
import { APP_URL, setupTestApp, signedInUser } from "../setup/app";

// ASVS 16.2.1/16.2.2/16.2.4/16.4.1: what server/index.mjs and the worker write is one line per entry, with its time in UTC,
// its level and the request it belongs to, in a format a log processor reads (JSON, or text with LOG_FORMAT=text),
// and nothing a message holds can start a line of its own.
const app = setupTestApp({ provider: true });

const FIXED = new Date("2026-11-26T18:04:05.678Z");
const FORGED_LINE = '{"time":"2026-11-26T00:00:00.000Z","level":"info","msg":"admin signed in"}';

let out: string[] = [];
let err: string[] = [];
let uninstall: (() => void) | undefined;
let server: Awaited<ReturnType<typeof startServerApp>> | undefined;
/** Fires on every stdout write. */
const written = new EventTarget();

function install(format: "json" | "text", now?: () => Date) {
  out = [];
  err = [];
  uninstall = installStructuredConsole({
    format,
    instance: "app-a",
    stdout: {
      write: (text: string) => {
        out.push(text);
        written.dispatchEvent(new Event("write"));
      },
    },
    stderr: { write: (text: string) => err.push(text) },
    now,
  });
}

/** What was written, line by line: every write must end its line, and only there. */
function lines(writes: string[]) {
  for (const write of writes) expect(write.indexOf("\n")).toBe(write.length - 1);
  return writes.map((write) => write.slice(0, -1));
}

afterEach(async () => {
  await server?.close();
  server = undefined;
  uninstall?.();
  uninstall = undefined;
  setConfig(app.config);
});
afterAll(() => uninstall?.());

describe("log lines", () => {
  it("are JSON with the time in UTC, the level, the instance and the message, info to stdout and errors to stderr", () => {
    install("json", () => FIXED);
    console.log("[worker] started");
    console.warn("[api] a service is unavailable:", "database");
    expect(lines(out).map((line) => JSON.parse(line))).toEqual([
      { time: "2026-11-26T18:04:05.678Z", level: "info", instance: "app-a", msg: "[worker] started" },
    ]);
    expect(lines(err).map((line) => JSON.parse(line))).toEqual([
      {
        time: "2026-11-26T18:04:05.678Z",
        level: "warn",
        instance: "app-a",
        msg: "[api] a service is unavailable: database",
      },
    ]);
  });

  it("keep an error's stack in the one line of its entry", () => {
    install("json");
    const before = Date.now();
    console.error(new Error("the engine answered garbage"));
    const [entry] = lines(err).map((line) => JSON.parse(line));
    expect(entry.level).toBe("error");
    expect(entry.msg).toMatch(/^Error: the engine answered garbage\n {4}at /);
    expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(entry.time)).toBeGreaterThanOrEqual(before);
  });

  it("cannot be forged by what a message holds, in either format, and JSON gives the message back as it was", () => {
    // A file name, an engine's answer or an IdP's error description carrying line breaks and a made-up entry.
    const hostile = `bad\n${FORGED_LINE}\r\nERROR \u2028 forged\u0085 \u001b[31m red \\n`;
    install("json", () => FIXED);
    console.warn("[upload] refused:", hostile);
    const [json] = lines(err);
    expect(JSON.parse(json).msg).toBe(`[upload] refused: ${hostile}`);
    // eslint-disable-next-line no-control-regex -- what must not be in a line is the point
    expect(json).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    uninstall?.();

    install("text", () => FIXED);
    console.warn("[upload] refused:", hostile);
    const [text] = lines(err);
    expect(text).toBe(
      "2026-11-26T18:04:05.678Z WARN  instance=app-a [upload] refused: bad\\n" +
        `${FORGED_LINE}\\r\\nERROR \\u2028 forged\\u0085 \\u001b[31m red \\\\n`,
    );
  });

  it("carry the request id of the request they were written for, across awaits", async () => {
    install("json");
    await withLogContext({ request_id: "req-12345678" }, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      console.info("[letters] saving a prompt failed: timeout");
    });
    console.info("[boot] ready");
    expect(lines(out).map((line) => JSON.parse(line).request_id)).toEqual(["req-12345678", undefined]);
  });

  it("escape spaces in text fields, so a field's value cannot pose as another field", () => {
    const line = formatLogLine({
      format: "text",
      time: FIXED,
      level: "info",
      msg: "GET /",
      fields: { request_id: "a status=500", instance: undefined },
    });
    expect(line).toBe("2026-11-26T18:04:05.678Z INFO  request_id=a\\u0020status=500 GET /");
    expect(escapeLogText("ä – ok")).toBe("ä – ok");
  });

  it("are refused in any other format before the app starts", () => {
    expect(parseEnv({ LOG_FORMAT: "text" }).LOG_FORMAT).toBe("text");
    expect(parseEnv({}).LOG_FORMAT).toBe("json");
    expect(() => parseEnv({ LOG_FORMAT: "xml" })).toThrow(/LOG_FORMAT/);
  });
});

describe("the request line and the request id (server/app.mjs)", () => {
  async function serve(trustProxy?: string) {
    setConfig({ ...app.config, trustProxy: parseEnv(trustProxy ? { TRUST_PROXY: trustProxy } : {}).TRUST_PROXY });
    server = await startServerApp();
    return server.url;
  }

  /**
   * The request lines for `path`, parsed, once there is one: the server writes it when the answer has gone, which
   * can be after the client has the answer (on a busy machine, well after).
   */
  async function requestLines(path: string) {
    const found = () =>
      lines(out)
        .map((line) => JSON.parse(line))
        .filter((entry) => entry.path === path);
    await new Promise<void>((resolve) => {
      const check = () => {
        if (found().length === 0) return;
        written.removeEventListener("write", check);
        resolve();
      };
      written.addEventListener("write", check);
      check();
    });
    return found();
  }

  beforeEach(() => install("json"));

  it("names each request with a new id in its answer, its log line and its audit row, whatever the client sent", async () => {
    const base = await serve();
    const response = await fetch(`${base}/chat?q=Herr%20M%C3%BCller`, {
      method: "POST",
      headers: { Origin: "https://evil.example", "X-Request-Id": "chosen-by-the-client" },
      body: "intent=clear",
    });
    expect(response.status).toBe(403);
    const id = response.headers.get("X-Request-Id");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    const [entry] = await requestLines("/chat");
    expect(entry).toMatchObject({ level: "info", method: "POST", path: "/chat", status: 403, request_id: id });
    expect(entry.msg).toMatch(/^POST \/chat 403 (\d+|-) - [\d.]+ ms$/);
    // The query (a search's terms, a signed URL's signature) is never written.
    expect(out.join("")).not.toContain("M%C3%BCller");

    const row = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "csrf.rejected")
      .select("request_id")
      .orderBy("at", "desc")
      .executeTakeFirstOrThrow();
    expect(row.request_id).toBe(id);
  });

  it("takes the id a trusted proxy hands over, but not a malformed one", async () => {
    const base = await serve("loopback");
    const given = await fetch(`${base}/healthz-missing`, { headers: { "X-Request-Id": "5f0c2a9e7b3d41c8" } });
    expect(given.headers.get("X-Request-Id")).toBe("5f0c2a9e7b3d41c8");
    const [entry] = await requestLines("/healthz-missing");
    expect(entry.request_id).toBe("5f0c2a9e7b3d41c8");

    const malformed = await fetch(`${base}/healthz-missing`, { headers: { "X-Request-Id": "x y" } });
    expect(malformed.headers.get("X-Request-Id")).not.toBe("x y");
    expect(malformed.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("gives the live door's WebSocket upgrade an id of its own for its audit row", async () => {
    const base = await serve();
    const { user, cookie } = await signedInUser({ email: "live-request-id@praxis.example" });
    const live = await createLiveSession({ userId: user.id, kind: "recording", language: "de" });
    const socket = new WebSocket(`${base.replace("http", "ws")}/live/ws?session=${live.id}`, {
      headers: { Cookie: cookie, Origin: APP_URL, "X-Request-Id": "chosen-by-the-client" },
    });
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    socket.close();
    const row = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "live.connect")
      .where("user_id", "=", user.id)
      .select("request_id")
      .executeTakeFirstOrThrow();
    expect(row.request_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
