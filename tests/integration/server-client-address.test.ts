import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { parseEnv, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { createLiveSession } from "~/services/live/sessions.server";
import { startServerApp } from "../support/server-app";
import { APP_URL, setupTestApp, signedInUser } from "../setup/app";

// ASVS 4.1.3 / 15.3.4 / 6.3.1, through the real Express layer of server/index.mjs: the client address that the audit
// trail records and the sign-in start limit counts is the socket's, unless TRUST_PROXY names the proxy the request
// came through. A client that writes X-Forwarded-For (or the app's own address header) itself changes neither.
const app = setupTestApp({ provider: true, env: { RATE_LIMIT_SIGNIN_PER_MINUTE: "3" } });

const FORGED = ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"];
let server: Awaited<ReturnType<typeof startServerApp>> | undefined;

/** The server as `node server/index.mjs` starts it with this TRUST_PROXY (unset: undefined), through the config parser. */
async function serveWith(trustProxy: string | undefined) {
  await server?.close();
  setConfig({ ...app.config, trustProxy: parseEnv(trustProxy ? { TRUST_PROXY: trustProxy } : {}).TRUST_PROXY });
  server = await startServerApp();
  return server.url;
}

beforeAll(() => {
  // The sign-in limit counts per minute: all requests of a test fall into one window, wherever the clock stands.
  vi.useFakeTimers({ toFake: ["Date"], now: Math.ceil(Date.now() / 60_000) * 60_000, shouldAdvanceTime: true });
});
beforeEach(() => getDb().deleteFrom("rate_limits").execute());
afterEach(() => setConfig(app.config));
afterAll(async () => {
  await server?.close();
  vi.useRealTimers();
});

function signInStart(base: string, headers: Record<string, string>) {
  return fetch(`${base}/auth/start`, { redirect: "manual", headers });
}

async function signInBuckets() {
  const rows = await getDb()
    .selectFrom("rate_limits")
    .where("bucket", "like", "signin:ip:%")
    .select(["bucket", "hits"])
    .orderBy("bucket")
    .execute();
  return rows.map((row) => `${row.bucket}=${row.hits}`);
}

async function lastAudit(action: string) {
  return getDb()
    .selectFrom("audit_events")
    .where("action", "=", action)
    .select(["ip", "outcome"])
    .orderBy("at", "desc")
    .executeTakeFirstOrThrow();
}

describe("without TRUST_PROXY", () => {
  it("counts sign-in starts per socket address: forged addresses neither escape the limit nor reach the audit", async () => {
    const base = await serveWith(undefined);
    const statuses: number[] = [];
    for (const address of FORGED) {
      const response = await signInStart(base, {
        "X-Forwarded-For": address,
        "X-Skribent-Client-Address": address,
      });
      statuses.push(response.status);
    }
    // Three starts a minute from one address (RATE_LIMIT_SIGNIN_PER_MINUTE), then a translated 429.
    expect(statuses).toEqual([302, 302, 302, 429]);
    expect(await signInBuckets()).toEqual(["signin:ip:127.0.0.1=4"]);
    expect(await lastAudit("auth.signin.start")).toEqual({ ip: "127.0.0.1", outcome: "denied" });
  });

  it("records the socket's address for a refused cross-site post, checked before Remix", async () => {
    const base = await serveWith("false");
    const response = await fetch(`${base}/chat`, {
      method: "POST",
      headers: { Origin: "https://evil.example", "X-Forwarded-For": FORGED[0] },
      body: "intent=clear",
    });
    expect(response.status).toBe(403);
    expect(await lastAudit("csrf.rejected")).toEqual({ ip: "127.0.0.1", outcome: "denied" });
  });
});

describe("with TRUST_PROXY", () => {
  it("takes the address a trusted proxy names, so clients behind one proxy are counted apart", async () => {
    const base = await serveWith("loopback");
    for (const address of FORGED) {
      // What the balancer sends: its client's address, and whatever the client tried to say about itself overwritten.
      const response = await signInStart(base, { "X-Forwarded-For": address, "X-Skribent-Client-Address": "1.2.3.4" });
      expect(response.status).toBe(302);
    }
    expect(await signInBuckets()).toEqual(FORGED.map((address) => `signin:ip:${address}=1`));
  });

  it("ignores X-Forwarded-For from a client that is not one of the named proxies", async () => {
    const base = await serveWith("192.0.2.10, 10.0.0.0/8");
    for (const address of FORGED) await signInStart(base, { "X-Forwarded-For": address });
    expect(await signInBuckets()).toEqual(["signin:ip:127.0.0.1=4"]);
  });

  it("with a hop count takes the entry the last proxy added, not what the client wrote before it", async () => {
    const base = await serveWith("1");
    await signInStart(base, { "X-Forwarded-For": `${FORGED[0]}, 198.51.100.7` });
    expect(await signInBuckets()).toEqual(["signin:ip:198.51.100.7=1"]);
    await fetch(`${base}/chat`, {
      method: "POST",
      headers: { Origin: "https://evil.example", "X-Forwarded-For": `${FORGED[1]}, 198.51.100.8` },
      body: "intent=clear",
    });
    expect(await lastAudit("csrf.rejected")).toEqual({ ip: "198.51.100.8", outcome: "denied" });
  });
});

describe("the live door's WebSocket upgrade", () => {
  async function connect(base: string, forwardedFor: string) {
    const { user, cookie } = await signedInUser({ email: `live-${forwardedFor}@praxis.example` });
    const live = await createLiveSession({ userId: user.id, kind: "recording", language: "de" });
    const socket = new WebSocket(`${base.replace("http", "ws")}/live/ws?session=${live.id}`, {
      headers: { Cookie: cookie, Origin: APP_URL, "X-Forwarded-For": forwardedFor },
    });
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    socket.close();
    return lastAudit("live.connect");
  }

  it("audits the socket's address without TRUST_PROXY, and the proxy's client with it", async () => {
    expect(await connect(await serveWith(undefined), FORGED[0])).toEqual({ ip: "127.0.0.1", outcome: "success" });
    expect(await connect(await serveWith("loopback"), FORGED[1])).toEqual({ ip: FORGED[1], outcome: "success" });
  });
});
