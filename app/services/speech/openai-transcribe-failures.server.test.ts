import path from "node:path";
import { describe, expect, it } from "vitest";

import { FAILURES, startFakeOpenAiServer } from "../../../tests/support/fake-openai-transcribe";

import { createOpenAiTranscriptionEngine } from "./openai-transcribe.server";
import {
  EXPECTED_TOKENS,
  FAST,
  KEY,
  rejection,
  texts,
  fakeOpenAiTranscribeForEachTest,
} from "../../../tests/support/openai-transcribe-helpers";
import type { RetryPolicy } from "./retry";

// The OpenAI-compatible transcription engine's failures against the fake server (PROTOCOLS.md §3.3, §3.4): which
// it retries and how long it waits, time-outs, the caller's abort, and the health check.

describe("OpenAI-compatible transcription engine", () => {
  const world = fakeOpenAiTranscribeForEachTest();
  const { engine, request } = world;

  describe("failures", () => {
    it("does not retry a refused key (401) and keeps the key out of the message", async () => {
      const error = await rejection(engine({ apiKey: "sk-wrong-secret-value" }).transcribe(request()));
      expect(error).toMatchObject({
        kind: "permanent",
        options: { status: 401, userMessageKey: "transcriptions:errors.engineNotConfigured" },
      });
      expect(error.message).toContain("refused the API key");
      expect(error.message).toContain("Incorrect API key");
      expect(error.message).not.toContain("sk-wrong-secret-value");
      expect(world.server.transcriptionRequests()).toHaveLength(1);
    });

    it("says that a key is needed when none is configured", async () => {
      const error = await rejection(engine({ apiKey: undefined }).transcribe(request()));
      expect(error).toMatchObject({ kind: "permanent", options: { status: 401 } });
      expect(error.message).toContain("requires an API key");
      expect(world.server.requests[0].bearer).toBe(false);
    });

    it("does not retry speaches' 403 {detail}", async () => {
      world.server.dialect = "speaches";
      const error = await rejection(engine({ apiKey: "wrong" }).transcribe(request()));
      expect(error).toMatchObject({ kind: "permanent", options: { status: 403 } });
      expect(error.message).toContain("Invalid API key");
      expect(world.server.transcriptionRequests()).toHaveLength(1);
    });

    it("does not retry an exhausted quota (429 insufficient_quota)", async () => {
      world.server.failAlways = FAILURES.quotaExceeded();
      const error = await rejection(engine().transcribe(request()));
      expect(error).toMatchObject({
        kind: "permanent",
        options: { status: 429, userMessageKey: "transcriptions:errors.engineNotConfigured" },
      });
      expect(error.message).toContain("quota");
      expect(world.server.transcriptionRequests()).toHaveLength(1);
    });

    it("waits as retry-after-ms says on a rate limit, not the backoff", async () => {
      world.server.failNext(1, FAILURES.rateLimited(30, 5));
      const slowBackoff: RetryPolicy = { attempts: 3, baseDelayMs: 20_000, maxDelayMs: 20_000 };
      const started = Date.now();
      const result = await engine({ retry: slowBackoff }).transcribe(request());
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(result.words.length).toBeGreaterThan(0);
      expect(world.server.transcriptionRequests().map((r) => r.status)).toEqual([429, 200]);
    });

    it("takes Retry-After in seconds when there is no retry-after-ms", async () => {
      world.server.failNext(1, FAILURES.rateLimited(0));
      const slowBackoff: RetryPolicy = { attempts: 3, baseDelayMs: 20_000, maxDelayMs: 20_000 };
      await engine({ retry: slowBackoff }).transcribe(request());
      expect(world.server.transcriptionRequests().map((r) => r.status)).toEqual([429, 200]);
    });

    it("retries 503s and succeeds", async () => {
      world.server.failNext(2, FAILURES.overloaded());
      const result = await engine().transcribe(request());
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
      expect(world.server.transcriptionRequests().map((r) => r.status)).toEqual([503, 503, 200]);
    });

    it("gives up on persistent 5xx as transient after the policy's attempts", async () => {
      world.server.failAlways = { status: 500, message: "boom" };
      const error = await rejection(engine().transcribe(request()));
      expect(error).toMatchObject({ kind: "transient", options: { status: 500 } });
      expect(error.message).toContain("boom");
      expect(world.server.transcriptionRequests()).toHaveLength(FAST.attempts);
    });

    it("honours x-should-retry both ways", async () => {
      world.server.failAlways = { ...FAILURES.overloaded(), headers: { "x-should-retry": "false" } };
      expect(await rejection(engine().transcribe(request()))).toMatchObject({ kind: "permanent" });
      expect(world.server.transcriptionRequests()).toHaveLength(1);

      world.server.failAlways = null;
      world.server.failNext(1, { status: 400, message: "try again", headers: { "x-should-retry": "true" } });
      await engine().transcribe(request());
      expect(world.server.transcriptionRequests().map((r) => r.status)).toEqual([503, 400, 200]);
    });

    it.each([
      { style: "vllm" as const, status: 400, message: "Invalid language", kind: "permanent" },
      { style: "fastapi" as const, status: 415, message: "Unsupported media type", kind: "permanent" },
      { style: "openai" as const, status: 422, message: "Unprocessable", kind: "permanent" },
      { style: "llamacpp" as const, status: 503, message: "Loading model", kind: "transient" },
      { style: "plain" as const, status: 502, message: "Bad Gateway", kind: "transient" },
    ])("reads a $style error body ($status → $kind)", async ({ style, status, message, kind }) => {
      world.server.failAlways = { status, style, message };
      const error = await rejection(engine().transcribe(request()));
      expect(error).toMatchObject({ kind, options: { status } });
      expect(error.message).toContain(message);
      expect(error.message).not.toContain("<");
      expect(world.server.transcriptionRequests()).toHaveLength(kind === "transient" ? FAST.attempts : 1);
    });

    it("retries after llama.cpp's 'Loading model' and then succeeds", async () => {
      world.server.failNext(1, FAILURES.loadingModel());
      await engine().transcribe(request());
      expect(world.server.transcriptionRequests().map((r) => r.status)).toEqual([503, 200]);
    });

    it("retries a 200 with malformed JSON, and ends transient when it persists", async () => {
      world.server.failNext(1, FAILURES.malformed());
      expect(texts(await engine().transcribe(request()))).toEqual(EXPECTED_TOKENS);
      expect(world.server.transcriptionRequests()).toHaveLength(2);

      world.server.failAlways = FAILURES.malformed();
      const error = await rejection(engine().transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("without valid JSON");
      expect(world.server.transcriptionRequests()).toHaveLength(2 + FAST.attempts);
    });

    it("does not retry well-formed JSON of the wrong shape", async () => {
      world.server.failAlways = { status: 200, style: "fastapi", message: "not a transcription" };
      const error = await rejection(engine().transcribe(request()));
      expect(error.kind).toBe("permanent");
      expect(world.server.transcriptionRequests()).toHaveLength(1);
    });

    it("times out a server that never answers, as transient", async () => {
      world.server.hang = true;
      const error = await rejection(
        engine({ requestTimeoutMs: 200, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } }).transcribe(request()),
      );
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("within 200 ms");
      expect(world.server.transcriptionRequests()).toHaveLength(2);
    });

    it("times out an answer that stops halfway, as transient", async () => {
      world.server.stallBody = true;
      const error = await rejection(
        engine({ requestTimeoutMs: 300, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } }).transcribe(request()),
      );
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("broke off or did not complete within 300 ms");
      expect(world.server.transcriptionRequests()).toHaveLength(2);
    });

    it("stops at once when the caller aborts", async () => {
      world.server.hang = true;
      const controller = new AbortController();
      const reason = new Error("job cancelled");
      setTimeout(() => controller.abort(reason), 100);
      const started = Date.now();
      await expect(engine().transcribe(request({ signal: controller.signal }))).rejects.toBe(reason);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(world.server.transcriptionRequests()).toHaveLength(1);

      // Also while the answer is arriving.
      world.server.hang = false;
      world.server.stallBody = true;
      const second = new AbortController();
      setTimeout(() => second.abort(reason), 100);
      await expect(engine().transcribe(request({ signal: second.signal }))).rejects.toBe(reason);
      expect(world.server.transcriptionRequests()).toHaveLength(2);
    });

    it("refuses a missing audio file without calling the server", async () => {
      const error = await rejection(engine().transcribe(request({ file: path.join(world.dir, "missing.wav") })));
      expect(error.kind).toBe("permanent");
      expect(world.server.requests).toHaveLength(0);
    });

    it("is not configured without a base URL", async () => {
      const bare = engine({ baseUrl: "" });
      expect((await rejection(bare.transcribe(request()))).kind).toBe("not_configured");
      expect(await bare.check()).toMatchObject({ status: "not_configured" });
    });
  });

  describe("check", () => {
    it("is healthy when /models answers, and sends the key", async () => {
      expect(await engine().check(1_000)).toEqual({ status: "healthy" });
      expect(world.server.requests[0]).toMatchObject({ method: "GET", path: "/v1/models", bearer: true, status: 200 });
    });

    it("is healthy when the server has no /models endpoint", async () => {
      world.server.modelsEndpoint = false;
      expect(await engine().check(1_000)).toMatchObject({ status: "healthy", detail: "no /models endpoint" });
    });

    it("reports a refused key without the key", async () => {
      const health = await engine({ apiKey: "sk-wrong-secret-value" }).check(1_000);
      expect(health.status).toBe("error");
      expect(health.detail).toContain("401");
      expect(health.detail).not.toContain("sk-wrong");
    });

    it("reports 5xx, time-outs and an unreachable server as errors", async () => {
      world.server.failAlways = FAILURES.overloaded();
      expect(await engine().check(1_000)).toMatchObject({ status: "error", detail: expect.stringContaining("503") });

      world.server.failAlways = null;
      world.server.hang = true;
      expect(await engine().check(200)).toMatchObject({ status: "error", detail: expect.stringContaining("200 ms") });

      const url = world.server.url;
      await world.server.close();
      const health = await createOpenAiTranscriptionEngine({ baseUrl: url, apiKey: KEY, model: "whisper-1" }).check(
        1_000,
      );
      expect(health).toMatchObject({ status: "error", detail: expect.stringContaining("Cannot reach") });
      expect(health.detail).not.toContain(KEY);
      world.server = await startFakeOpenAiServer();
    });
  });
});
