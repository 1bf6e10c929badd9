import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parseEnv, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { createLiveSession } from "~/services/live/sessions.server";
import { INSTANCE_HOST, makeInternalCa } from "../../scripts/internal-ca.mjs";
import { installStructuredConsole } from "../../server/log.mjs";
import { readTlsSettings } from "../../server/tls.mjs";
import { startNginxFront, SERVER_NAME, type NginxFront } from "../support/nginx-front";
import { startServerApp } from "../support/server-app";
import { APP_URL, setupTestApp, signedInUser } from "../setup/app";

// The TLS-terminating balancer the repository ships (deploy/nginx/skribent.conf with skribent-locations.conf), run
// by Debian's nginx in front of the app's own Express layer: what reaches the app and what a client meets
// (ASVS 4.1.2, 4.1.3, 4.2.1, 12.1.1, 12.1.2). The app serves HTTPS with a certificate from a test internal CA, as the
// shipped file expects (ADR 0022; what nginx does with any other certificate: deploy-nginx-instance-tls.test.ts).
// The scale-out proof runs a whole workflow through the same locations.
const app = setupTestApp({ provider: true });

let server: Awaited<ReturnType<typeof startServerApp>>;
let front: NginxFront;
/** Request lines the app wrote: what nginx forwarded. */
const appLines: string[] = [];
let uninstall: () => void;
let caDir: string;
/** The internal CA's certificate: what a client of the instance itself trusts. */
let instanceCa: string;

beforeAll(async () => {
  uninstall = installStructuredConsole({
    format: "json",
    stdout: { write: (text: string) => appLines.push(text) },
    stderr: { write: (text: string) => appLines.push(text) },
  });
  // The instances believe only the balancer (TRUST_PROXY), as skribent.conf's header comment asks.
  setConfig({ ...app.config, trustProxy: parseEnv({ TRUST_PROXY: "loopback" }).TRUST_PROXY });
  caDir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-internal-ca-"));
  const ca = makeInternalCa(caDir);
  const { certFile, keyFile } = ca.issue(INSTANCE_HOST);
  instanceCa = fs.readFileSync(ca.caFile, "utf8");
  server = await startServerApp({ tls: readTlsSettings({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile }) });
  front = await startNginxFront(server.port, { instanceCa: ca.caFile });
});

afterAll(async () => {
  await front?.stop();
  await server?.close();
  if (caDir) fs.rmSync(caDir, { recursive: true, force: true });
  uninstall?.();
  setConfig(app.config);
});

type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

function read(request: http.ClientRequest, body?: string) {
  return new Promise<Answer>((resolve, reject) => {
    request.once("response", (response) => {
      let text = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      response.once("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
    });
    request.once("error", reject);
    request.end(body);
  });
}

function overHttp(pathname: string, headers: Record<string, string> = {}) {
  return read(http.request({ host: "127.0.0.1", port: front.httpPort, path: pathname, headers }));
}

function overHttps(
  pathname: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  const request = https.request({
    host: "127.0.0.1",
    port: front.httpsPort,
    servername: SERVER_NAME,
    ca: front.ca,
    path: pathname,
    method: options.method ?? "GET",
    headers: { Host: SERVER_NAME, ...options.headers },
  });
  return read(request, options.body);
}

/** A TLS handshake with what the client offers; the negotiated protocol and suite, or the error. */
function handshake(options: tls.ConnectionOptions) {
  return new Promise<{ protocol: string | null; cipher: string } | { error: string }>((resolve) => {
    const socket = tls.connect({
      host: "127.0.0.1",
      port: front.httpsPort,
      servername: SERVER_NAME,
      ca: front.ca,
      ...options,
    });
    socket.once("secureConnect", () => {
      resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().name });
      socket.destroy();
    });
    socket.once("error", (error) => resolve({ error: error.message }));
  });
}

/** Sends raw bytes and returns the first line of the answer. */
function rawRequest(connect: () => tls.TLSSocket, bytes: string) {
  return new Promise<string>((resolve, reject) => {
    const socket = connect();
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    socket.once("end", () => resolve(answer.split("\r\n")[0]));
    socket.once("close", () => resolve(answer.split("\r\n")[0]));
    socket.once("error", reject);
    socket.write(bytes);
  });
}

const forwardedPaths = () =>
  appLines
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.path)
    .map((entry) => entry.path as string);

describe("plain HTTP", () => {
  it("sends a person to HTTPS, but refuses the API, the resource routes, the live door and the sign-in's return", async () => {
    const page = await overHttp("/arztbriefe?sort=date");
    expect(page.status).toBe(301);
    expect(page.headers.location).toBe(`https://${SERVER_NAME}/arztbriefe?sort=date`);

    for (const pathname of ["/api/files", "/resources/healthz", "/live/ws", "/auth/callback?code=abc&state=def"]) {
      const answer = await overHttp(pathname, { Authorization: "Bearer not-to-be-forwarded" });
      expect([pathname, answer.status, answer.body]).toEqual([pathname, 403, "HTTPS required\n"]);
      expect(answer.headers.location).toBeUndefined();
    }
    expect(forwardedPaths()).not.toEqual(
      expect.arrayContaining(["/api/files", "/resources/healthz", "/auth/callback"]),
    );
  });
});

describe("TLS", () => {
  it("speaks TLS 1.3, and TLS 1.2 only with forward-secret AEAD suites", async () => {
    expect(await handshake({})).toMatchObject({ protocol: "TLSv1.3" });
    expect(await handshake({ maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES256-GCM-SHA384" })).toEqual({
      protocol: "TLSv1.2",
      cipher: "ECDHE-RSA-AES256-GCM-SHA384",
    });
    // RSA key exchange (no forward secrecy), CBC: what a default `HIGH:!aNULL:!MD5` would still accept.
    for (const cipher of ["AES128-GCM-SHA256", "AES256-SHA256", "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA384"]) {
      const result = await handshake({ maxVersion: "TLSv1.2", ciphers: cipher });
      expect([cipher, result]).toEqual([
        cipher,
        { error: expect.stringMatching(/handshake failure|no shared cipher/i) },
      ]);
    }
  });

  it("serves the app with its security headers and no server version", async () => {
    const answer = await overHttps("/login");
    expect(answer.status).toBe(200);
    expect(answer.body).toContain("<html");
    expect(answer.headers["content-security-policy"]).toMatch(/script-src 'nonce-/);
    expect(answer.headers.server).toBe("nginx");
  });
});

describe("the live door", () => {
  it("upgrades a wss: socket through the balancer to the app, and refuses a plain ws: one", async () => {
    const { user, cookie } = await signedInUser({ email: "wss-through-nginx@praxis.example" });
    const live = await createLiveSession({ userId: user.id, kind: "recording", language: "de" });
    const open = (url: string) =>
      new Promise<string>((resolve) => {
        const socket = new WebSocket(url, {
          headers: { Cookie: cookie, Origin: APP_URL },
          ca: front.ca,
        });
        socket.once("open", () => {
          socket.close();
          resolve("open");
        });
        socket.once("unexpected-response", (_request, response) => resolve(`refused ${response.statusCode}`));
        socket.once("error", (error) => resolve(`error ${error.message}`));
      });
    expect(await open(`wss://127.0.0.1:${front.httpsPort}/live/ws?session=${live.id}`)).toBe("open");
    expect(await open(`ws://127.0.0.1:${front.httpPort}/live/ws?session=${live.id}`)).toBe("refused 403");
    const connects = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "live.connect")
      .where("user_id", "=", user.id)
      .select(["ip", "outcome"])
      .execute();
    expect(connects).toEqual([{ ip: "127.0.0.1", outcome: "success" }]);
  });
});

describe("what the app is told", () => {
  it("is the client's address and the balancer's request id, never what the client wrote under those names", async () => {
    const answer = await overHttps("/chat", {
      method: "POST",
      headers: {
        Origin: "https://evil.example",
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Forwarded-For": "203.0.113.9",
        "X-Skribent-Client-Address": "203.0.113.9",
        "X-Request-Id": "chosen-by-the-client",
      },
      body: "intent=clear",
    });
    expect(answer.status).toBe(403);
    const id = answer.headers["x-request-id"];
    // nginx's $request_id: 32 hex digits, handed over and believed because the peer is the trusted balancer.
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    const row = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "csrf.rejected")
      .where("request_id", "=", id as string)
      .select(["ip", "outcome"])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ ip: "127.0.0.1", outcome: "denied" });
  });
});

describe("request smuggling (message boundaries)", () => {
  // Content-Length says the body is the 4 bytes "0\r\n\r"; chunked framing says it ended before the second request.
  const ambiguous = (host: string) =>
    [
      "POST /resources/healthz HTTP/1.1",
      `Host: ${host}`,
      "Content-Length: 4",
      "Transfer-Encoding: chunked",
      "",
      "0",
      "",
      "GET /smuggled HTTP/1.1",
      `Host: ${host}`,
      "",
      "",
    ].join("\r\n");

  it("refuses a request framed by both Content-Length and Transfer-Encoding, at the balancer and at the app", async () => {
    const atBalancer = await rawRequest(
      () => tls.connect({ host: "127.0.0.1", port: front.httpsPort, servername: SERVER_NAME, ca: front.ca }),
      ambiguous(SERVER_NAME),
    );
    expect(atBalancer).toBe("HTTP/1.1 400 Bad Request");

    const atApp = await rawRequest(
      () => tls.connect({ host: "127.0.0.1", port: server.port, servername: INSTANCE_HOST, ca: instanceCa }),
      ambiguous("localhost"),
    );
    expect(atApp).toBe("HTTP/1.1 400 Bad Request");
    expect(forwardedPaths()).not.toContain("/smuggled");
  });
});
