import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSTANCE_HOST, makeInternalCa } from "../../scripts/internal-ca.mjs";
import { readTlsSettings } from "../../server/tls.mjs";
import { startNginxFront, SERVER_NAME, type NginxFront } from "../support/nginx-front";
import { startServerApp } from "../support/server-app";
import { setupTestApp } from "../setup/app";

// ASVS 12.3.3, 12.3.4 (ADR 0022): the shipped balancer (deploy/nginx/skribent.conf with skribent-locations.conf, run
// by Debian's nginx) talks TLS to the instance and checks its certificate against the internal CA it is given and
// the name it is told (proxy_ssl_name). An instance that shows a certificate of another CA, one for another name, or
// no TLS at all is never sent the request: the client gets nginx's 502, not the page.
setupTestApp();

type Instance = Awaited<ReturnType<typeof startServerApp>> & { requests: number; secure: string[] };

let dir: string;
let ca: ReturnType<typeof makeInternalCa>;
const started: Array<{ stop(): Promise<void> } | { close(): Promise<void> }> = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-instance-tls-"));
  ca = makeInternalCa(path.join(dir, "trusted"));
});

afterAll(async () => {
  for (const thing of started.reverse()) await ("stop" in thing ? thing.stop() : thing.close());
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** An instance serving these certificate files (none: plain HTTP), counting what reaches it. */
async function startInstance(files?: { certFile: string; keyFile: string }) {
  const tls = files ? readTlsSettings({ TLS_CERT_FILE: files.certFile, TLS_KEY_FILE: files.keyFile }) : undefined;
  const instance: Instance = Object.assign(await startServerApp({ tls }), { requests: 0, secure: [] as string[] });
  instance.server.on("request", () => instance.requests++);
  instance.server.on("secureConnection", (socket: TLSSocket) =>
    instance.secure.push(`${socket.getProtocol()} ${String(socket.servername)}`),
  );
  started.push(instance);
  return instance;
}

async function front(instance: Instance) {
  const nginx: NginxFront = await startNginxFront(instance.port, { instanceCa: ca.caFile });
  started.push(nginx);
  return nginx;
}

function get(nginx: NginxFront, pathname: string) {
  return new Promise<{ status: number; body: string; requestId?: string }>((resolve, reject) => {
    const request = https.request({
      host: "127.0.0.1",
      port: nginx.httpsPort,
      servername: SERVER_NAME,
      ca: nginx.ca,
      path: pathname,
      headers: { Host: SERVER_NAME },
    });
    request.once("response", (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.once("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          body,
          requestId: response.headers["x-request-id"] as string | undefined,
        }),
      );
    });
    request.once("error", reject);
    request.end();
  });
}

describe("the balancer in front of instances that speak TLS", () => {
  it("does not start without the internal CA to check them against", async () => {
    const instance = await startInstance(ca.issue(INSTANCE_HOST, { file: "no-ca" }));
    await expect(startNginxFront(instance.port, { instanceCa: null })).rejects.toThrow(
      /no proxy_ssl_trusted_certificate for proxy_ssl_verify/,
    );
  });

  it("reaches an instance whose certificate the internal CA issued for the configured name, over TLS", async () => {
    const instance = await startInstance(ca.issue(INSTANCE_HOST));
    const nginx = await front(instance);
    const page = await get(nginx, "/login");
    expect(page.status).toBe(200);
    expect(page.body).toContain("<html");
    expect(instance.requests).toBe(1);
    // nginx's handshake, with the name it verified as SNI (proxy_ssl_server_name).
    expect(instance.secure).toEqual([`TLSv1.3 ${INSTANCE_HOST}`]);
  });

  const refused: Array<[string, () => Promise<Instance>, RegExp]> = [
    [
      "a certificate from a CA it was not given",
      () => startInstance(makeInternalCa(path.join(dir, "other-ca"), { commonName: "Not ours" }).issue(INSTANCE_HOST)),
      /upstream SSL certificate verify error: \(21:unable to verify the first certificate\)/,
    ],
    [
      "a certificate for another name",
      () => startInstance(ca.issue("other-app.internal")),
      new RegExp(`upstream SSL certificate does not match "${INSTANCE_HOST.replace(/\./g, "\\.")}"`),
    ],
    ["no TLS at all", () => startInstance(), /SSL_do_handshake\(\) failed|wrong version number|packet length/],
  ];

  it.each(refused)("answers 502 for an instance with %s, which never gets the request", async (_, start, why) => {
    const instance = await start();
    const nginx = await front(instance);
    const page = await get(nginx, "/login");
    expect(page.status).toBe(502);
    expect(page.body).toContain("502 Bad Gateway");
    expect(page.body).not.toContain("<html lang");
    // No answer of the app's: it would carry the request id the app sets on every answer.
    expect(page.requestId).toBeUndefined();
    expect(instance.requests).toBe(0);
    expect(nginx.errorLog()).toMatch(why);
  });
});
