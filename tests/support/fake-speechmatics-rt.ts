import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";

import { WebSocketServer, type WebSocket } from "ws";

import { DEFAULT_RT_SCRIPT } from "./fake-speechmatics-rt-recognition";
import { runSession, type FakeRtKnobs, type FakeRtLimits, type FakeRtSession } from "./fake-speechmatics-rt-session";

// A local Speechmatics Realtime API (v2, WebSocket) that behaves as PROTOCOLS.md §2 describes the real one.
// Reproduced ("Behaviours a faithful realtime test server must reproduce", items 1–8):
// 1. The upgrade (GET /v2 or /v2/<language>) needs `Authorization: Bearer <apiKey>` or `?jwt=<temporary key>`,
//    one this server issued (POST /v1/api_keys?type=rt {"ttl": 60..86400} with the long-lived key →
//    201 {"key_value"}) and that has not expired; otherwise HTTP 401 and no upgrade (404 for another path,
//    405 for another method).
// 2. Info recognition_quality right after the handshake (so before RecognitionStarted, §5); RecognitionStarted
//    {id} before any ack or transcript; audio or EndOfStream before StartRecognition → Error protocol_error,
//    close 1003 (fake-speechmatics-rt-session.ts).
// 3. AudioAdded {seq_no} 1, 2, 3… in order, once the frame is consumed; `ackDelayMs` slows consumption.
// 4–5. Recognition (fake-speechmatics-rt-recognition.ts): partials only with enable_partials, a Partial of the
//    tail after each Final, no overlapping Finals, each due `min(max_delay, 1 s)` after its word; EndOfStream
//    → every remaining Final, then EndOfTranscript; audio after it → Warning add_audio_after_eos, not acked.
// 6. A bad StartRecognition → Error and close (fake-speechmatics-rt-start.ts has the checks and the codes).
// 7. Idle (no audio) and session time-outs, scaled by `idleTimeoutMs`/`sessionTimeoutMs`: Warnings at the
//    lead times, then Error idle_timeout/session_timeout and close 1008.
// 8. metadata.transcript joins the results by a space, marks attached to the word before.
// Not reproduced: SetRecognitionConfig, ForceEndOfUtterance, GetSpeakers, channels and translation (answered
// with Error invalid_message), audio_format "file" and mulaw, ping/pong time-outs, the concurrent-session
// quota (`failStartWith` quota_exceeded stands in), real recognition, the exact wording of reasons.
// `sessions` records what each connection sent (never keys); `handshakes` and `tokenRequests` every attempt.

export type { FakeRtSession } from "./fake-speechmatics-rt-session";

export type FakeRtOptions = Partial<FakeRtKnobs> &
  FakeRtLimits & {
    host?: string;
    port?: number;
    /** The long-lived key ("test-key"). */
    apiKey?: string;
    /** The next `count` management calls answer `status` before anything else is checked. */
    managementFailures?: { count: number; status: number } | null;
  };

export type FakeSpeechmaticsRt = FakeRtKnobs & {
  /** ws://host:port/v2 */
  url: string;
  /** http://host:port/v1 */
  managementUrl: string;
  apiKey: string;
  managementFailures: { count: number; status: number } | null;
  sessions: FakeRtSession[];
  handshakes: Array<{ status: number; auth: "bearer" | "jwt" | "none" }>;
  tokenRequests: Array<{ type: string | null; ttl: unknown; status: number }>;
  /** Makes every temporary key issued so far expired. */
  expireTemporaryKeys(): void;
  close(): Promise<void>;
};

function refuse(socket: Duplex, status: number, text: string) {
  const json = JSON.stringify({ code: status, error: text });
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
      `Connection: close\r\n\r\n${json}`,
  );
}

/** Shaped like the real ones (a JWT); only this server's list of issued keys makes it valid. */
function temporaryKey(ttl: number) {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const claims = { type: "rt", exp: Math.floor(Date.now() / 1000) + ttl, jti: randomUUID() };
  return `${part({ alg: "HS256", typ: "JWT" })}.${part(claims)}.${randomBytes(16).toString("base64url")}`;
}

function ttlOf(body: string): unknown {
  try {
    return (JSON.parse(body) as { ttl?: unknown } | null)?.ttl;
  } catch {
    return undefined;
  }
}

export async function startFakeSpeechmaticsRt(options: FakeRtOptions = {}): Promise<FakeSpeechmaticsRt> {
  const issued = new Map<string, number>();
  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((req, res) => void management(req, res));
  const limits: FakeRtLimits = options;

  const state: FakeSpeechmaticsRt = {
    url: "",
    managementUrl: "",
    apiKey: options.apiKey ?? "test-key",
    script: options.script ?? DEFAULT_RT_SCRIPT,
    ackDelayMs: options.ackDelayMs ?? 0,
    failStartWith: options.failStartWith ?? null,
    warnAfterFrames: options.warnAfterFrames ?? null,
    errorAfterFrames: options.errorAfterFrames ?? null,
    closeAbruptlyAfterFrames: options.closeAbruptlyAfterFrames ?? null,
    lineOf: options.lineOf,
    managementFailures: options.managementFailures ?? null,
    sessions: [],
    handshakes: [],
    tokenRequests: [],
    expireTemporaryKeys() {
      for (const key of issued.keys()) issued.set(key, 0);
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve, fail) => server.close((error) => (error ? fail(error) : resolve())));
    },
  };

  async function management(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://fake.invalid");
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const type = url.searchParams.get("type");
    const send = (status: number, answer: unknown) => {
      if (url.pathname === "/v1/api_keys") state.tokenRequests.push({ type, ttl: ttlOf(body), status });
      res.writeHead(status, { "Content-Type": "application/json", "Request-Id": randomUUID() });
      res.end(JSON.stringify(answer));
    };
    if (url.pathname !== "/v1/api_keys") return send(404, { code: 404, error: "Not found" });
    if (req.method !== "POST") return send(405, { code: 405, error: "Method not allowed" });
    const failures = state.managementFailures;
    if (failures && failures.count > 0) {
      failures.count--;
      return send(failures.status, { code: failures.status, error: "Service Unavailable" });
    }
    if (req.headers.authorization !== `Bearer ${state.apiKey}`)
      return send(401, { code: 401, error: "Permission Denied" });
    if (type !== "rt" && type !== "batch") return send(422, { code: 422, message: "type must be rt or batch" });
    const ttl = ttlOf(body);
    if (typeof ttl !== "number" || !Number.isInteger(ttl) || ttl < 60 || ttl > 86_400)
      return send(422, { code: 422, message: "ttl must be an integer between 60 and 86400" });
    const key = temporaryKey(ttl);
    // A batch key is made but never accepted here: it is for the batch API.
    if (type === "rt") issued.set(key, Date.now() + ttl * 1000);
    send(201, { apikey_id: null, key_value: key });
  }

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://fake.invalid");
    const jwt = url.searchParams.get("jwt");
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const auth = bearer !== undefined ? "bearer" : jwt !== null ? "jwt" : "none";
    const valid = bearer !== undefined ? bearer === state.apiKey : jwt !== null && (issued.get(jwt) ?? 0) > Date.now();
    const answer = (status: number, text: string) => {
      state.handshakes.push({ status, auth });
      refuse(socket, status, text);
    };
    if (req.method !== "GET") return answer(405, "Method Not Allowed");
    if (!/^\/v2(\/[a-z]{2,3})?\/?$/.test(url.pathname)) return answer(404, "Not Found");
    if (!valid) return answer(401, "Permission Denied");
    state.handshakes.push({ status: 101, auth });
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
      const session = runSession(ws, {
        auth: auth === "jwt" ? "jwt" : "bearer",
        path: url.pathname,
        knobs: state,
        limits,
      });
      state.sessions.push(session);
    });
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  state.url = `ws://${host}:${port}/v2`;
  state.managementUrl = `http://${host}:${port}/v1`;
  return state;
}
