import { fetch } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { minimalValue, reply, startFakeOpenAiChatServer, type FakeChatServer } from "./fake-openai-chat";

// The fake OpenAI-compatible chat server against the published behaviours (PROTOCOLS.md §3.2–3.4).

const KEY = "sk-fake-0123456789";

describe("fake OpenAI chat server", () => {
  let server: FakeChatServer;

  beforeEach(async () => {
    server = await startFakeOpenAiChatServer({ apiKey: KEY });
  });

  afterEach(async () => {
    await server.close();
  });

  function post(body: unknown, key: string | null = KEY) {
    return fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
  }

  const schema = {
    type: "object",
    properties: { a: { type: "string", minLength: 3 }, b: { type: "array", items: { enum: ["x", "y"] }, minItems: 2 } },
    required: ["a", "b"],
    additionalProperties: false,
  };
  const structured = {
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "Give me the thing." }],
    response_format: { type: "json_schema", json_schema: { name: "thing", schema, strict: true } },
  };

  it("answers json_schema requests with a content string that satisfies the schema, and records the request", async () => {
    const response = await post(structured);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      object: string;
      choices: Array<{ message: { content: string; refusal: null }; finish_reason: string }>;
      usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    };
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]!.finish_reason).toBe("stop");
    expect(JSON.parse(body.choices[0]!.message.content)).toEqual({ a: "xxx", b: ["x", "x"] });
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    const [recorded] = server.chatRequests();
    expect(recorded!.body.response_format.json_schema.name).toBe("thing");
    expect(recorded!.headers.authorization).toBe("Bearer ***");
    expect(recorded!.status).toBe(200);
  });

  it("refuses a missing or wrong key with OpenAI's 401, or speaches' 403 {detail}", async () => {
    const missing = await post(structured, null);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_api_key" } });
    server.authStyle = "speaches";
    const wrong = await post(structured, "sk-wrong");
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual({ detail: "Invalid API key" });
  });

  it("checks requests as OpenAI does", async () => {
    expect((await post({ messages: [{ role: "user", content: "hi" }] })).status).toBe(400);
    expect((await post({ model: "m", messages: [] })).status).toBe(400);
    expect((await post({ model: "m", messages: [{ role: "robot", content: "hi" }] })).status).toBe(400);
    const noJsonWord = await post({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      response_format: { type: "json_object" },
    });
    expect(noJsonWord.status).toBe(400);
    expect(((await noJsonWord.json()) as { error: { message: string } }).error.message).toMatch(/json/);
    const badName = await post({
      ...structured,
      response_format: { type: "json_schema", json_schema: { name: "a b", schema } },
    });
    expect(badName.status).toBe(400);
    expect(server.chatRequests()).toHaveLength(5);
  });

  it("plays queued replies in order: truncated, refusal, error styles with headers, then the responder", async () => {
    server.replies.push(
      reply.truncated({ a: "abcdef", b: ["x", "y"] }),
      reply.refusal("no"),
      reply.rateLimited(2, 1500),
      reply.error(500, { style: "vllm", message: "boom" }),
      reply.loadingModel(),
      reply.error(400, { style: "fastapi", message: "bad" }),
      reply.error(502, { style: "html", message: "Bad Gateway" }),
    );
    const truncated = (await (await post(structured)).json()) as {
      choices: Array<{ message: { content: string }; finish_reason: string }>;
    };
    expect(truncated.choices[0]!.finish_reason).toBe("length");
    expect(() => JSON.parse(truncated.choices[0]!.message.content)).toThrow();

    const refusal = (await (await post(structured)).json()) as {
      choices: Array<{ message: { content: null; refusal: string } }>;
    };
    expect(refusal.choices[0]!.message).toMatchObject({ content: null, refusal: "no" });

    const limited = await post(structured);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(limited.headers.get("retry-after-ms")).toBe("1500");

    expect(await (await post(structured)).json()).toMatchObject({ object: "error", message: "boom", code: 500 });
    expect(await (await post(structured)).json()).toEqual({
      error: { code: 503, message: "Loading model", type: "unavailable_error" },
    });
    expect(await (await post(structured)).json()).toEqual({ detail: "bad" });
    const html = await post(structured);
    expect(html.headers.get("content-type")).toContain("text/html");
    expect(await html.text()).toContain("Bad Gateway");

    expect((await post(structured)).status).toBe(200);
  });

  it("frees a slow reply's timer when the client goes away", async () => {
    server.replies.push(reply.slow(60_000));
    const controller = new AbortController();
    const pending = fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
      body: JSON.stringify(structured),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await expect.poll(() => server.pendingTimers()).toBe(1);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await expect.poll(() => server.pendingTimers()).toBe(0);
    expect(server.chatRequests()[0]).toMatchObject({ abandoned: true, status: null });
  });

  it("lists models, or answers 404 without the endpoint", async () => {
    const list = await fetch(`${server.url}/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(await list.json()).toMatchObject({ object: "list", data: [{ id: "gpt-4o-mini" }] });
    server.modelsEndpoint = false;
    expect((await fetch(`${server.url}/models`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(404);
  });

  it("builds minimal values for every keyword it knows", () => {
    expect(minimalValue({ const: 3 })).toBe(3);
    expect(minimalValue({ type: "integer" })).toBe(0);
    expect(minimalValue({ type: "object", properties: { x: { type: "boolean" } } })).toEqual({ x: false });
  });
});
