import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";

import { reply } from "../../../tests/support/fake-openai-chat";

import { FAST, VALID, rejection, request, fakeOpenAiChatForEachTest } from "../../../tests/support/openai-chat-helpers";

// The OpenAI-compatible chat engine's HTTP failures against the fake server (PROTOCOLS.md §3.3–3.4): which it
// retries and how often, how long it waits, and what its messages point the operator at.

describe("OpenAI-compatible chat engine", () => {
  const world = fakeOpenAiChatForEachTest();
  const { model } = world;

  describe("HTTP failures", () => {
    it("waits as long as retry-after-ms says, then succeeds", async () => {
      world.server.replies.push(reply.rateLimited(30, 150), reply.json(VALID));
      const started = performance.now();
      expect((await model().generateStructured(request())).value).toEqual(VALID);
      const waited = performance.now() - started;
      // retry-after-ms wins over Retry-After (30 s), and the backoff of 1–5 ms is not used.
      expect(waited).toBeGreaterThanOrEqual(140);
      expect(waited).toBeLessThan(10_000);
      expect(world.server.chatRequests()).toHaveLength(2);
    });

    it("honours Retry-After in seconds", async () => {
      world.server.replies.push(
        reply.error(429, { message: "Rate limit reached", headers: { "retry-after": "0.2" } }),
        reply.json(VALID),
      );
      const started = performance.now();
      await model().generateStructured(request());
      expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    });

    it("does not retry an exhausted quota and tells the clinician to ask the administrator", async () => {
      world.server.replies.push(reply.quotaExceeded(), reply.json(VALID));
      const error = await rejection(model().generateStructured(request()));
      expect(error.kind).toBe("permanent");
      expect(error.options).toMatchObject({ status: 429, userMessageKey: "letters:errors.engineNotConfigured" });
      expect(error.message).toMatch(/quota/);
      expect(world.server.chatRequests()).toHaveLength(1);
    });

    it.each([
      ["a 500 (OpenAI body)", () => reply.error(500, { message: "The server had an error" })],
      ["a 503 from llama.cpp while the model loads", () => reply.loadingModel()],
      ["a 502 HTML page from a proxy", () => reply.error(502, { style: "html", message: "Bad Gateway" })],
      ["a 408", () => reply.error(408, { style: "fastapi", message: "Request Timeout" })],
      ["a 409", () => reply.error(409, { style: "vllm", message: "Conflict" })],
    ])("retries %s and succeeds", async (_label, make) => {
      world.server.replies.push(make(), reply.json(VALID));
      expect((await model().generateStructured(request())).value).toEqual(VALID);
      expect(world.server.chatRequests()).toHaveLength(2);
    });

    it("gives up on transient failures after the retry policy's attempts, with the server's message", async () => {
      world.server.responder = () => reply.loadingModel();
      const error = await rejection(model().generateStructured(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("Loading model");
      expect(error.options.status).toBe(503);
      expect(world.server.chatRequests()).toHaveLength(FAST.attempts);
    });

    it("lets x-should-retry override the status", async () => {
      world.server.replies.push(reply.error(500, { headers: { "x-should-retry": "false" } }), reply.json(VALID));
      expect((await rejection(model().generateStructured(request()))).kind).toBe("permanent");
      expect(world.server.chatRequests()).toHaveLength(1);

      world.server.replies.length = 0;
      world.server.replies.push(reply.error(400, { headers: { "x-should-retry": "true" } }), reply.json(VALID));
      expect((await model().generateStructured(request())).value).toEqual(VALID);
      expect(world.server.chatRequests()).toHaveLength(3);
    });

    it.each([
      ["OpenAI", { style: "openai" as const }],
      ["vLLM (flat, int code)", { style: "vllm" as const }],
      ["llama.cpp", { style: "llamacpp" as const }],
      ["FastAPI", { style: "fastapi" as const }],
      ["HTML", { style: "html" as const }],
    ])("reads a 400 with the %s error body as permanent, with its message", async (_label, options) => {
      world.server.replies.push(reply.error(400, { ...options, message: "temperature is out of range" }));
      const error = await rejection(model().generateStructured(request()));
      expect(error.kind).toBe("permanent");
      expect(error.message).toContain("temperature is out of range");
      expect(world.server.chatRequests()).toHaveLength(1);
    });

    it("points at the structured-output setting when a server refuses response_format", async () => {
      world.server.replies.push(
        reply.error(400, {
          style: "llamacpp",
          message: 'response_format type must be one of "text" or "json_object", but got: json_schema',
        }),
      );
      const error = await rejection(model().generateStructured(request()));
      expect(error.message).toContain("LLM_OPENAI_STRUCTURED_OUTPUT=json_object");
    });

    it("refuses a wrong key at once, naming the setting and never the key", async () => {
      const error = await rejection(model({ apiKey: "sk-wrong-key-000000" }).generateStructured(request()));
      expect(error.kind).toBe("permanent");
      expect(error.options).toMatchObject({ status: 401, userMessageKey: "letters:errors.engineNotConfigured" });
      expect(error.message).toContain("LLM_OPENAI_API_KEY");
      expect(error.message).not.toContain("sk-wrong-key-000000");
      expect(world.server.chatRequests()).toHaveLength(1);
    });

    it("treats a web page answered with 200 as a wrong address, not as a model answer", async () => {
      world.server.replies.push(
        reply.error(200, { body: "<!doctype html><html><body>Login</body></html>", contentType: "text/html" }),
      );
      const error = await rejection(model().generateStructured(request()));
      expect(error.kind).toBe("permanent");
      expect(error.message).toContain("LLM_OPENAI_URL");
    });

    it("times out a slow answer as transient and stops after the retry policy's attempts", async () => {
      world.server.responder = () => reply.slow(30_000, reply.json(VALID));
      const error = await rejection(model({ timeoutMs: 100 }).generateStructured(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toMatch(/No answer from .* within 100 ms/);
      expect(world.server.chatRequests()).toHaveLength(FAST.attempts);
      await expect.poll(() => world.server.pendingTimers()).toBe(0);
    });

    it("stops at once when the caller aborts, without a retry", async () => {
      world.server.responder = () => reply.slow(30_000, reply.json(VALID));
      const controller = new AbortController();
      const pending = model().generateStructured(request({ signal: controller.signal }));
      await expect.poll(() => world.server.pendingTimers()).toBe(1);
      controller.abort(new Error("job cancelled"));
      await expect(pending).rejects.toThrow("job cancelled");
      await expect.poll(() => world.server.pendingTimers()).toBe(0);
      expect(world.server.chatRequests()).toHaveLength(1);
    });

    it("reports a server it cannot reach as transient", async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const error = await rejection(model({ baseUrl: `http://127.0.0.1:${port}/v1` }).generateStructured(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toMatch(/Cannot reach/);
    });

    it("does not follow a redirect, so neither the clinical text nor the key goes to where it points", async () => {
      let asked = 0;
      const redirecting = createServer((req, res) => {
        asked++;
        req.resume();
        res.writeHead(307, { Location: `${world.server.url}/chat/completions` }).end();
      });
      await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
      try {
        const { port } = redirecting.address() as AddressInfo;
        const error = await rejection(model({ baseUrl: `http://127.0.0.1:${port}/v1` }).generateStructured(request()));
        expect(error.kind).toBe("permanent");
        expect(error.message).toMatch(/redirected the request \(307\); set LLM_OPENAI_URL to the final address/);
        expect(asked).toBe(1);
        expect(world.server.requests).toHaveLength(0);
      } finally {
        redirecting.closeAllConnections();
        await new Promise((resolve) => redirecting.close(resolve));
      }
    });

    it("is not configured without a URL", async () => {
      const error = await rejection(model({ baseUrl: "" }).generateStructured(request()));
      expect(error.kind).toBe("not_configured");
      expect(await model({ baseUrl: "" }).check()).toEqual({
        status: "not_configured",
        detail: "LLM_OPENAI_URL is not set",
      });
    });
  });
});
