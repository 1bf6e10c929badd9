import { get, type RequestOptions } from "node:https";

import pg from "pg";
import { Agent, fetch } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";

import {
  certificateErrorCode,
  startUntrustedHttpsServer,
  startUntrustedPostgresServer,
  type UntrustedHttpsServer,
  type UntrustedPostgresServer,
} from "./untrusted-https";

// The control for tests/integration/outbound-tls.test.ts: those tests pass only when no request reaches the
// untrusted server, which would also be true of a server nobody could reach at all. Here the same servers are
// reached — and record it — by the same client libraries once told to trust the certificate or to skip the check,
// so a client that stopped validating would show up there as a recorded request.

function httpsStatus(url: string, options: RequestOptions = {}) {
  return new Promise<number>((resolve, reject) => {
    get(url, options, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on("error", reject);
  });
}

function webSocketOpens(url: string, options: { ca?: string; rejectUnauthorized?: boolean } = {}) {
  return new Promise<string>((resolve) => {
    const socket = new WebSocket(url, options);
    // The server cuts every upgrade it records; a refused certificate ends in an error before it.
    socket.on("error", (error) => resolve(certificateErrorCode(error) ?? "upgrade cut"));
  });
}

describe("the untrusted HTTPS server", () => {
  let server: UntrustedHttpsServer;

  beforeEach(async () => {
    server = await startUntrustedHttpsServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("is refused at the handshake by a client with the default trust store, and records nothing", async () => {
    const refused = await httpsStatus(`${server.url}/v1/models`).catch((error: unknown) => error);
    expect(certificateErrorCode(refused)).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(await webSocketOpens(`${server.wsUrl}/v2`)).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    await expect.poll(() => server.refusedHandshakes).toBe(2);
    expect(server.requests).toEqual([]);
  });

  it("is reached, and records it, by a client told to trust its certificate or not to check it", async () => {
    expect(await httpsStatus(`${server.url}/trusted`, { ca: server.cert })).toBe(200);
    expect(await httpsStatus(`${server.url}/unchecked`, { rejectUnauthorized: false })).toBe(200);
    const trusting = new Agent({ connect: { ca: server.cert } });
    try {
      expect((await fetch(`${server.url}/undici`, { dispatcher: trusting })).status).toBe(200);
    } finally {
      await trusting.close();
    }
    expect(await webSocketOpens(`${server.wsUrl}/v2`, { ca: server.cert })).toBe("upgrade cut");
    expect(server.requests).toEqual([
      { method: "GET", path: "/trusted", upgrade: false },
      { method: "GET", path: "/unchecked", upgrade: false },
      { method: "GET", path: "/undici", upgrade: false },
      { method: "GET", path: "/v2", upgrade: true },
    ]);
    expect(server.refusedHandshakes).toBe(0);
  });
});

describe("the untrusted PostgreSQL server", () => {
  let server: UntrustedPostgresServer;

  beforeEach(async () => {
    server = await startUntrustedPostgresServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("receives the startup message from a client told to trust its certificate", async () => {
    const client = new pg.Client({
      host: "127.0.0.1",
      port: server.port,
      user: "postgres",
      database: "postgres",
      ssl: { ca: server.cert },
      connectionTimeoutMillis: 5_000,
    });
    // The server closes after the startup message; that it arrived is the point.
    await expect(client.connect()).rejects.toThrow();
    await client.end().catch(() => {});
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.bytes).toBeGreaterThan(8);
    expect(server.refusedHandshakes).toBe(0);
  });
});
