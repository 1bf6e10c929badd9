import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { RETRY, failure, fakeSpeechmaticsForEachTest } from "../../../tests/support/speechmatics-helpers";

// The Speechmatics batch adapter's failures against tests/support/fake-speechmatics.ts (PROTOCOLS.md §1): rejected
// jobs and keys, which answers it retries and how long it waits, time-outs, aborts, and redirects.

describe("Speechmatics batch engine", () => {
  const world = fakeSpeechmaticsForEachTest();
  const { engine, request } = world;

  describe("transcribe()", () => {
    it("fails permanently with the reason of a rejected job, and deletes it", async () => {
      world.server.reject = { message: "The audio file could not be decoded" };
      const error = await failure(engine().transcribe(request()));
      expect(error.kind).toBe("permanent");
      expect(error.message).toContain("The audio file could not be decoded");
      expect(world.server.calls("transcript")).toBe(0);
      expect(world.server.jobs[0].status).toBe("deleted");
      expect(world.server.jobs[0].deletion?.force).toBe(false);
    });

    it.each(["html", "json"] as const)("fails permanently without retrying on 401 (%s body)", async (body) => {
      world.server.unauthorizedBody = body;
      const error = await failure(engine({ apiKey: "wrong-key" }).transcribe(request()));
      expect(error.kind).toBe("permanent");
      expect(error.options.status).toBe(401);
      expect(error.message).toContain("API key");
      expect(error.message).not.toContain("wrong-key");
      if (body === "json") expect(error.message).toContain("Unauthorized");
      expect(world.server.calls()).toBe(1);
      expect(world.server.jobs).toHaveLength(0);
    });

    it("fails permanently on 403 (entitlement) without retrying", async () => {
      world.server.forbidden = true;
      const error = await failure(engine().transcribe(request()));
      expect(error.kind).toBe("permanent");
      expect(error.options.status).toBe(403);
      expect(error.message).toContain("Entitlement check failed");
      expect(world.server.calls()).toBe(1);
    });

    it("backs off on 429 without Retry-After and succeeds", async () => {
      world.server.rateLimit = { count: 2, on: "create" };
      const result = await engine().transcribe(request());
      expect(result.words.length).toBeGreaterThan(0);
      expect(world.server.calls("create")).toBe(3);
      expect(world.server.jobs).toHaveLength(1);
    });

    it("waits as long as a Retry-After says instead of its own backoff", async () => {
      world.server.rateLimit = { count: 1, on: "status", retryAfterSeconds: 0 };
      const started = performance.now();
      // With a 4 s base delay its own backoff would take at least 2 s.
      await engine({ retry: { attempts: 3, baseDelayMs: 4_000, maxDelayMs: 4_000 } }).transcribe(request());
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(world.server.calls("status")).toBe(2);
    });

    it("retries 5xx answers on every call and succeeds", async () => {
      world.server.failures = { status: 500, count: 2, on: "create" };
      await engine().transcribe(request());
      world.server.failures = { status: 503, count: 1, on: "status" };
      await engine().transcribe(request());
      world.server.failures = { status: 502, count: 2, on: "transcript" };
      await engine().transcribe(request());
      expect(world.server.calls("create")).toBe(5);
      expect(world.server.calls("status")).toBe(4);
      expect(world.server.calls("transcript")).toBe(5);
      expect(world.server.jobs.map((j) => j.status)).toEqual(["deleted", "deleted", "deleted"]);
    });

    it("gives up with a transient error after the bounded attempts on a persistent 503", async () => {
      world.server.failures = { status: 503, count: Number.POSITIVE_INFINITY };
      const error = await failure(engine().transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.options.status).toBe(503);
      expect(world.server.calls("create")).toBe(RETRY.attempts);
      expect(world.server.calls()).toBe(RETRY.attempts);
    });

    it.each(["truncated", "shape"] as const)("retries a malformed transcript (%s), then fails", async (garbage) => {
      world.server.garbage = garbage;
      const error = await failure(engine().transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toMatch(/unreadable JSON|unexpected answer/);
      expect(world.server.calls("transcript")).toBe(RETRY.attempts);
      expect(world.server.jobs[0].status).toBe("deleted");
    });

    it("times out a call that is never answered with a transient error, and force-deletes the job", async () => {
      world.server.pollsUntilDone = 1;
      world.server.hang = { on: "status" };
      const started = performance.now();
      const error = await failure(engine({ requestTimeoutMs: 150 }).transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("No answer");
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(world.server.calls("status")).toBe(RETRY.attempts);
      expect(world.server.jobs[0].deletion).toMatchObject({ force: true });
    });

    it("times out an upload that is never answered", async () => {
      world.server.hang = { on: "create" };
      const error = await failure(engine({ uploadTimeoutMs: 150 }).transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(world.server.calls("create")).toBe(RETRY.attempts);
    });

    it("gives up when the job does not finish within maxWaitMs, and force-deletes it", async () => {
      world.server.pollsUntilDone = Number.POSITIVE_INFINITY;
      const error = await failure(engine({ maxWaitMs: 100 }).transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("did not finish");
      expect(world.server.jobs[0]).toMatchObject({ status: "deleted", deletion: { force: true } });
    });

    it("stops polling when the signal aborts, and force-deletes the running job", async () => {
      world.server.pollsUntilDone = Number.POSITIVE_INFINITY;
      const controller = new AbortController();
      const polling = engine().transcribe(request({ signal: controller.signal }));
      while (world.server.calls("status") < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort(new Error("recording deleted"));
      await expect(polling).rejects.toThrow("recording deleted");
      expect(world.server.jobs[0]).toMatchObject({ status: "deleted", deletion: { force: true } });
      const polls = world.server.calls("status");
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(world.server.calls("status")).toBe(polls);
      expect(world.server.requests.at(-1)).toMatchObject({ route: "delete", query: "force=true", status: 200 });
    });

    it("sends nothing when the signal has already aborted", async () => {
      const controller = new AbortController();
      controller.abort(new Error("cancelled"));
      await expect(engine().transcribe(request({ signal: controller.signal }))).rejects.toThrow("cancelled");
      expect(world.server.calls()).toBe(0);
    });

    it("fails permanently when the audio file is missing", async () => {
      const error = await failure(engine().transcribe(request({ file: path.join(world.dir, "missing.wav") })));
      expect(error.kind).toBe("permanent");
      expect(world.server.calls()).toBe(0);
    });

    it("is not configured without an API key and sends nothing", async () => {
      const error = await failure(engine({ apiKey: undefined }).transcribe(request()));
      expect(error.kind).toBe("not_configured");
      expect(world.server.calls()).toBe(0);
    });

    it("refuses a redirected upload without retrying it", async () => {
      let posts = 0;
      const redirecting = createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          posts++;
          res.writeHead(307, { Location: `${world.server.url}/jobs` });
          res.end();
        });
      });
      await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
      try {
        const { port } = redirecting.address() as AddressInfo;
        const error = await failure(engine({ batchUrl: `http://127.0.0.1:${port}/v2` }).transcribe(request()));
        expect(error.kind).toBe("permanent");
        expect(error.message).toContain("redirect");
        expect(posts).toBe(1);
        expect(world.server.calls()).toBe(0);
      } finally {
        redirecting.closeAllConnections();
        await new Promise((resolve) => redirecting.close(resolve));
      }
    });
  });
});
