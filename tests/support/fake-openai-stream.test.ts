import { fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, startFakeOpenAiChatServer, type FakeChatServer } from "./fake-openai-chat";

// The fake server's streaming on the wire (PROTOCOLS.md §3.2, behaviour 6): chunks, the finish_reason chunk, the
// optional usage chunk with `choices: []`, `[DONE]`; an in-stream error event; and OpenAI's request checks.

let server: FakeChatServer;
beforeAll(async () => {
  server = await startFakeOpenAiChatServer();
});
afterAll(() => server.close());

function post(body: Record<string, unknown>) {
  return fetch(`${server.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hallo" }], ...body }),
  });
}

async function events(response: Awaited<ReturnType<typeof post>>) {
  return (await response.text())
    .split("\n\n")
    .filter(Boolean)
    .map((event) => {
      expect(event.startsWith("data: ")).toBe(true);
      const data = event.slice("data: ".length);
      return data === "[DONE]" ? data : JSON.parse(data);
    });
}

describe("fake OpenAI chat server, streaming", () => {
  it("streams chat.completion.chunk events, the usage chunk when asked, then [DONE]", async () => {
    server.replies = [reply.text("Guten Tag, Frau Müller.")];
    const response = await post({ stream: true, stream_options: { include_usage: true } });
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const all = await events(response);
    expect(all.at(-1)).toBe("[DONE]");
    const chunks = all.slice(0, -1);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(content).toBe("Guten Tag, Frau Müller.");
    const finish = chunks.findIndex((c) => c.choices[0]?.finish_reason === "stop");
    expect(finish).toBe(chunks.length - 2);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it("sends no usage chunk unless asked", async () => {
    server.replies = [reply.text("Kurz.")];
    const chunks = (await events(await post({ stream: true }))).slice(0, -1);
    expect(chunks.every((c) => Array.isArray(c.choices) && c.choices.length === 1 && !("usage" in c))).toBe(true);
  });

  it("reports an error in mid-stream as an {error} event", async () => {
    server.replies = [reply.streamError("Zuerst ", "boom")];
    const all = await events(await post({ stream: true }));
    expect(all.at(-1)).toEqual({ error: { message: "boom", type: "server_error" } });
    expect(all).not.toContain("[DONE]");
  });

  it("answers an error before the stream as a plain error, and checks stream parameters as OpenAI does", async () => {
    server.replies = [reply.overloaded()];
    const overloaded = await post({ stream: true });
    expect(overloaded.status).toBe(503);
    expect((await post({ stream: "yes" })).status).toBe(400);
    expect((await post({ stream_options: { include_usage: true } })).status).toBe(400);
  });
});
