import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";

import { fakeSpeechmaticsRtForEachTest, rejection } from "../../../tests/support/speechmatics-rt-helpers";

import { createRealtimeToken } from "./speechmatics-token.server";

// The direct mode's temporary key against the fake's management endpoint (POST /v1/api_keys?type=rt).

const FAST = { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

/** Whether a WebSocket with this temporary key gets through the handshake. */
function opens(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.on("open", () => {
      ws.close(1000);
      resolve(true);
    });
    ws.on("unexpected-response", () => {
      ws.terminate();
      resolve(false);
    });
    ws.on("error", () => resolve(false));
  });
}

describe("createRealtimeToken", () => {
  const world = fakeSpeechmaticsRtForEachTest();

  it("returns a 60 s key that opens a realtime session with ?jwt=", async () => {
    const before = Date.now();
    const token = await createRealtimeToken({ apiKey: "test-key", managementUrl: world.server.managementUrl });
    expect(token.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 60_000);
    expect(token.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(world.server.tokenRequests).toEqual([{ type: "rt", ttl: 60, status: 201 }]);
    expect(await opens(`${world.server.url}?jwt=${encodeURIComponent(token.jwt)}`)).toBe(true);
    expect(world.server.sessions[0].auth).toBe("jwt");
  });

  it("fails at once with not_authorised on a rejected key, never naming the key", async () => {
    const error = await rejection(
      createRealtimeToken({ apiKey: "wrong-key", managementUrl: world.server.managementUrl, retry: FAST }),
    );
    expect(error.type).toBe("not_authorised");
    expect(error.options.transient).toBeFalsy();
    expect(`${error.message} ${String((error.options.cause as Error).message)}`).not.toContain("wrong-key");
    expect(world.server.tokenRequests).toHaveLength(1);
  });

  it("retries a 5xx a bounded number of times", async () => {
    world.server.managementFailures = { count: 2, status: 503 };
    const token = await createRealtimeToken({
      apiKey: "test-key",
      managementUrl: world.server.managementUrl,
      retry: FAST,
    });
    expect(token.jwt).toMatch(/^eyJ/);
    expect(world.server.tokenRequests.map((r) => r.status)).toEqual([503, 503, 201]);

    world.server.managementFailures = { count: 5, status: 500 };
    const error = await rejection(
      createRealtimeToken({ apiKey: "test-key", managementUrl: world.server.managementUrl, retry: FAST }),
    );
    expect(error).toMatchObject({ type: "engine_unavailable", options: { transient: true } });
    expect(world.server.tokenRequests.slice(3).map((r) => r.status)).toEqual([500, 500, 500]);
  });

  it("refuses without a key and sends nothing", async () => {
    const error = await rejection(createRealtimeToken({ apiKey: " ", managementUrl: world.server.managementUrl }));
    expect(error.type).toBe("engine_unavailable");
    expect(world.server.tokenRequests).toHaveLength(0);
  });
});

describe("createRealtimeToken without an answer", () => {
  let hanging: Server | undefined;
  afterEach(async () => {
    hanging?.closeAllConnections();
    await new Promise((resolve) => (hanging ? hanging.close(resolve) : resolve(undefined)));
    hanging = undefined;
  });

  it("gives up after its time-out, and on an unreachable host, as transient engine_unavailable", async () => {
    hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging!.listen(0, "127.0.0.1", resolve));
    const { port } = hanging.address() as AddressInfo;
    const retry = { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 };
    const timedOut = await rejection(
      createRealtimeToken({ apiKey: "test-key", managementUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: 100, retry }),
    );
    expect(timedOut).toMatchObject({ type: "engine_unavailable", options: { transient: true } });
    expect(timedOut.message).toContain("within 100 ms");

    const free = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port: unused } = probe.address() as AddressInfo;
        probe.close(() => resolve(unused));
      });
    });
    const refused = await rejection(
      createRealtimeToken({ apiKey: "test-key", managementUrl: `http://127.0.0.1:${free}/v1`, retry }),
    );
    expect(refused).toMatchObject({ type: "engine_unavailable", options: { transient: true } });
  });
});
