import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { reply, startFakeOpenAiChatServer, type FakeChatServer } from "../../../tests/support/fake-openai-chat";
import { createOpenAiChatModel } from "./openai-chat.server";
import { LlmError, type ChatRequest } from "./types";

// The OpenAI-compatible engine's streamed chat (issue 8; PROTOCOLS.md §3.2) against the fake server: the answer
// arrives piece by piece, usage comes from the include_usage chunk, failures before the first piece are retried
// like any request, and a failure after it ends the call at once (the caller already showed that text).

const KEY = "sk-stream-test-key";
let server: FakeChatServer;

beforeAll(async () => {
  server = await startFakeOpenAiChatServer({ apiKey: KEY });
});
afterAll(() => server.close());
afterEach(() => {
  server.replies = [];
  server.requests.length = 0;
  server.streamDelayMs = 0;
});

function model(baseUrl = server.url) {
  return createOpenAiChatModel({
    baseUrl,
    apiKey: KEY,
    model: "gpt-4o-mini",
    structuredOutput: "json_schema",
    contextTokens: 8192,
    timeoutMs: 5_000,
    retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
  });
}

const REQUEST: ChatRequest = {
  messages: [
    { role: "system", content: "You help with medical documentation." },
    { role: "user", content: "Was bedeutet ASS?" },
  ],
  maxTokens: 200,
};

async function streamed(request: ChatRequest = REQUEST, baseUrl?: string) {
  const pieces: string[] = [];
  const result = await model(baseUrl).chatStream!(request, (text) => pieces.push(text));
  return { pieces, result };
}

describe("streamed chat over the OpenAI protocol", () => {
  it("hands the answer over piece by piece, asks for usage, and returns the whole answer with it", async () => {
    server.streamDelayMs = 5;
    server.replies = [reply.text("ASS ist Acetylsalicylsäure, ein Thrombozytenaggregationshemmer.")];
    const { pieces, result } = await streamed();
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join("")).toBe("ASS ist Acetylsalicylsäure, ein Thrombozytenaggregationshemmer.");
    expect(result.content).toBe(pieces.join(""));
    expect(result.usage.completionTokens).toBe(Math.ceil(result.content.length / 4));
    expect(result.usage.promptTokens).toBeGreaterThan(0);
    const sent = server.chatRequests()[0]!;
    expect(sent.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_tokens: 200 });
    expect(sent.headers.accept).toBe("text/event-stream");
  });

  it("leaves plain chat as it was: one JSON answer, no stream", async () => {
    server.replies = [reply.text("OK.")];
    const result = await model().chat(REQUEST);
    expect(result.content).toBe("OK.");
    expect(server.chatRequests()[0]!.body.stream).toBeUndefined();
  });

  it("retries a failure before the first piece, so the caller sees one answer", async () => {
    server.replies = [reply.overloaded(), reply.text("Zweiter Versuch.")];
    const { pieces, result } = await streamed();
    expect(pieces.join("")).toBe("Zweiter Versuch.");
    expect(result.content).toBe("Zweiter Versuch.");
    expect(server.chatRequests()).toHaveLength(2);
  });

  it("ends at once on an error in mid-stream, without a second request", async () => {
    server.replies = [reply.streamError("Die Antwort beginnt ")];
    const pieces: string[] = [];
    const error = await model().chatStream!(REQUEST, (text) => pieces.push(text)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).kind).toBe("permanent");
    expect((error as LlmError).message).toMatch(/in the middle of the answer/);
    expect(pieces.join("")).toBe("Die Antwort beginnt ");
    expect(server.chatRequests()).toHaveLength(1);
  });

  it("reports a stream that breaks off after some text, without a second request", async () => {
    // Paced, so that the text has left the server before the connection breaks.
    server.streamDelayMs = 20;
    server.replies = [reply.brokenStream("Abgebrochen ")];
    const error = await streamed().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).message).toMatch(/broke off/);
    expect(server.chatRequests()).toHaveLength(1);
  });

  it("refuses a refusal, as plain chat does", async () => {
    server.replies = [reply.refusal("I can't help with that.")];
    await expect(streamed()).rejects.toThrow(/refused to answer/);
  });

  it("reads a server that ignores `stream` and answers JSON as one piece", async () => {
    const plain: Server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            choices: [{ index: 0, message: { role: "assistant", content: "Ganz." }, finish_reason: "stop" }],
            usage: { prompt_tokens: 12, completion_tokens: 2 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = plain.address() as AddressInfo;
      const { pieces, result } = await streamed(REQUEST, `http://127.0.0.1:${port}/v1`);
      expect(pieces).toEqual(["Ganz."]);
      expect(result.usage).toEqual({ promptTokens: 12, completionTokens: 2 });
    } finally {
      await new Promise((resolve) => plain.close(resolve));
    }
  });
});
