import { spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { getDb } from "~/models/db.server";
import { createLiveSession } from "~/services/live/sessions.server";
import { INSTANCE_HOST, makeInternalCa } from "../../scripts/internal-ca.mjs";
import { readTlsSettings } from "../../server/tls.mjs";
import { startServerApp } from "../support/server-app";
import { APP_URL, setupTestApp, signedInUser } from "../setup/app";

// ASVS 12.3.1, 12.3.3 (ADR 0022): with TLS_CERT_FILE and TLS_KEY_FILE the app serves HTTPS itself — the instance
// as server/index.mjs starts it (server/tls.mjs reads the files, server/listen.mjs listens; the Express app over the
// source build), with a certificate from a test internal CA. And `node server/index.mjs` itself refuses a wrong setting
// before it boots, naming the variable (no build is needed for that: it stops before importing it).
setupTestApp();

let dir: string;
let ca: ReturnType<typeof makeInternalCa>;
let caPem: string;
/** The certificate the instance was started with. */
let served: X509Certificate;
let instance: Awaited<ReturnType<typeof startServerApp>>;
const seen = { requests: 0, refusedHandshakes: 0 };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-server-tls-"));
  ca = makeInternalCa(path.join(dir, "ca"));
  caPem = fs.readFileSync(ca.caFile, "utf8");
  const { certFile, keyFile } = ca.issue(INSTANCE_HOST);
  served = new X509Certificate(fs.readFileSync(certFile));
  instance = await startServerApp({ tls: readTlsSettings({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile }) });
  instance.server.on("request", () => seen.requests++);
  instance.server.on("tlsClientError", () => seen.refusedHandshakes++);
});

afterAll(async () => {
  await instance?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A client that trusts the internal CA and checks the instance's name, as the balancer does. */
const trusting = () => ({ host: "127.0.0.1", port: instance.port, servername: INSTANCE_HOST, ca: caPem });

function get(pathname: string, cookie?: string) {
  return new Promise<{ status: number; type: string; body: string; protocol: string | null }>((resolve, reject) => {
    const request = https.request({
      ...trusting(),
      path: pathname,
      headers: cookie ? { Cookie: cookie } : {},
    });
    request.once("response", (response) => {
      let body = "";
      const protocol = (response.socket as tls.TLSSocket).getProtocol();
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.once("end", () =>
        resolve({ status: response.statusCode ?? 0, type: String(response.headers["content-type"]), body, protocol }),
      );
    });
    request.once("error", reject);
    request.end();
  });
}

/** A TLS handshake with what the client offers: the protocol and the server's certificate, or the error. */
function handshake(options: tls.ConnectionOptions) {
  return new Promise<{ protocol: string | null; fingerprint: string } | { error: string }>((resolve) => {
    const socket = tls.connect({ ...trusting(), ...options });
    socket.once("secureConnect", () => {
      resolve({ protocol: socket.getProtocol(), fingerprint: socket.getPeerX509Certificate()!.fingerprint256 });
      socket.destroy();
    });
    socket.once("error", (error) => resolve({ error: error.message }));
  });
}

describe("an instance with TLS_CERT_FILE and TLS_KEY_FILE", () => {
  it("answers a page and a JSON call over HTTPS, with the configured certificate", async () => {
    const page = await get("/login");
    expect([page.status, page.type, page.protocol]).toEqual([200, "text/html; charset=utf-8", "TLSv1.3"]);
    expect(page.body).toContain("<html");

    const { cookie } = await signedInUser({ email: "https-instance@praxis.example" });
    const files = await get("/api/files", cookie);
    expect([files.status, files.type]).toEqual([200, "application/json; charset=utf-8"]);
    expect(JSON.parse(files.body)).toEqual({ files: [] });

    expect(await handshake({})).toEqual({ protocol: "TLSv1.3", fingerprint: served.fingerprint256 });
  });

  it("speaks TLS 1.2 and 1.3, and refuses older protocols", async () => {
    expect(await handshake({ maxVersion: "TLSv1.2" })).toMatchObject({ protocol: "TLSv1.2" });
    // The client's OpenSSL is told to offer TLS 1.0 and 1.1 (security level 0): the server's alert refuses them.
    const old = await handshake({ minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0" });
    expect(old).toEqual({ error: expect.stringMatching(/alert protocol version/) });
  });

  it("accepts under TLS 1.2 only forward-secret AEAD suites, as the balancer does", async () => {
    const tls12 = (ciphers: string) => handshake({ maxVersion: "TLSv1.2", ciphers });
    // The instance's certificate has an EC key: the ECDSA suites are the ones it could use.
    expect(await tls12("ECDHE-ECDSA-AES256-GCM-SHA384")).toMatchObject({ protocol: "TLSv1.2" });
    // CBC suites, forward-secret but not AEAD: in Node's default list, refused here.
    for (const weak of ["ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA"])
      expect(await tls12(weak), weak).toEqual({ error: expect.stringMatching(/handshake failure/) });
  });

  it("refuses plain HTTP on its port: no answer, nothing reaches the app", async () => {
    const before = { ...seen };
    const plain = await new Promise<string>((resolve) => {
      const request = http.get({ host: "127.0.0.1", port: instance.port, path: "/login" }, (response) =>
        resolve(`answered ${response.statusCode}`),
      );
      request.once("error", (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`));
    });
    expect(plain).toMatch(/^error (ECONNRESET|EPIPE)$/);
    expect(seen.requests).toBe(before.requests);
    expect(seen.refusedHandshakes).toBe(before.refusedHandshakes + 1);
  });

  it("upgrades a wss: socket to the live door, and has no ws: one", async () => {
    const { user, cookie } = await signedInUser({ email: "wss-instance@praxis.example" });
    const live = await createLiveSession({ userId: user.id, kind: "recording", language: "de" });
    const open = (url: string) =>
      new Promise<string>((resolve) => {
        const socket = new WebSocket(url, {
          headers: { Cookie: cookie, Origin: APP_URL },
          ca: caPem, // the certificate names 127.0.0.1 too
        });
        socket.once("open", () => {
          socket.close();
          resolve("open");
        });
        socket.once("unexpected-response", (_request, response) => resolve(`refused ${response.statusCode}`));
        socket.once("error", (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`));
      });
    expect(await open(`wss://127.0.0.1:${instance.port}/live/ws?session=${live.id}`)).toBe("open");
    expect(await open(`ws://127.0.0.1:${instance.port}/live/ws?session=${live.id}`)).toMatch(/^error ECONNRESET$/);
    const connects = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "live.connect")
      .where("user_id", "=", user.id)
      .select(["outcome"])
      .execute();
    expect(connects).toEqual([{ outcome: "success" }]);
  });
});

/** `node server/index.mjs` with only these settings (as `uid`, if given): its exit code and what it wrote to stderr. */
function startServer(env: Record<string, string>, user: { uid?: number; gid?: number } = {}) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ["server/index.mjs"], {
      env: { PATH: process.env.PATH, NODE_ENV: "production", LOG_FORMAT: "json", ...env },
      stdio: ["ignore", "ignore", "pipe"],
      ...user,
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("exit", (code) => resolve({ code, stderr }));
  });
}

describe("node server/index.mjs with a wrong TLS setting", () => {
  it("stops before it boots, with a readable line naming the variable", async () => {
    const good = ca.issue(INSTANCE_HOST, { file: "good" });
    const other = ca.issue(INSTANCE_HOST, { file: "other" });
    const missing = path.join(dir, "missing.pem");
    const cases: Array<[Record<string, string>, string]> = [
      [{ TLS_CERT_FILE: good.certFile }, "TLS_KEY_FILE: is required with TLS_CERT_FILE"],
      [{ TLS_KEY_FILE: good.keyFile }, "TLS_CERT_FILE: is required with TLS_KEY_FILE"],
      [{ TLS_CERT_FILE: missing, TLS_KEY_FILE: good.keyFile }, `TLS_CERT_FILE: ${missing} does not exist`],
      [{ TLS_CERT_FILE: good.certFile, TLS_KEY_FILE: dir }, `TLS_KEY_FILE: ${dir} is a directory`],
      [
        { TLS_CERT_FILE: good.keyFile, TLS_KEY_FILE: good.certFile },
        `TLS_CERT_FILE: ${good.keyFile} holds no PEM certificate\n  - TLS_KEY_FILE: ${good.certFile} holds no`,
      ],
      [
        { TLS_CERT_FILE: good.certFile, TLS_KEY_FILE: other.keyFile },
        `TLS_KEY_FILE: ${other.keyFile} is not the private key of the certificate in TLS_CERT_FILE`,
      ],
    ];
    for (const [env, problem] of cases) expect(await refusal(env)).toContain(problem);
  });

  it("names a file it may not read", async () => {
    // Files only their owner may read. Root reads anything: as root, the server is started as nobody.
    const shared = path.join(dir, "shared");
    fs.mkdirSync(shared);
    for (const folder of [dir, shared]) fs.chmodSync(folder, 0o755);
    const issued = ca.issue(INSTANCE_HOST, { file: "unreadable" });
    const [certFile, keyFile] = [path.join(shared, "cert.pem"), path.join(shared, "key.pem")];
    fs.copyFileSync(issued.certFile, certFile);
    fs.copyFileSync(issued.keyFile, keyFile);
    fs.chmodSync(certFile, 0o644);
    fs.chmodSync(keyFile, 0o000);
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    expect(await refusal({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile }, asNobody)).toContain(
      `TLS_KEY_FILE: ${keyFile} cannot be read by this process (permission denied)`,
    );
  });
});

/** What `node server/index.mjs` says when it refuses these settings: its one error line's message, checked for shape. */
async function refusal(env: Record<string, string>, user: { uid?: number; gid?: number } = {}) {
  const { code, stderr } = await startServer(env, user);
  const lines = stderr.trim().split("\n");
  expect([env, code, lines.length]).toEqual([env, 1, 1]);
  const entry = JSON.parse(lines[0]) as { level: string; msg: string };
  expect(entry.level).toBe("error");
  expect(entry.msg).toMatch(/^Invalid configuration:\n {2}- /);
  // A list a person reads, not an exception.
  expect(entry.msg).not.toMatch(/\n\s+at |Error:/);
  return entry.msg;
}
