import type { ServerResponse } from "node:http";

export type FakeErrorStyle = "openai" | "vllm" | "llamacpp" | "fastapi" | "html";

/** Parsed JSON whose shape the test (or this server) reads field by field, as a real server would. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request bodies and schemas are arbitrary JSON
export type Json = any;

export type Usage = { prompt_tokens: number; completion_tokens: number } | null;

export type FakeChatReply =
  | { kind: "json"; value: unknown; usage?: Usage }
  | { kind: "text"; content: string; finishReason?: string; usage?: Usage }
  | { kind: "refusal"; refusal: string; usage?: Usage }
  | { kind: "truncated"; value: unknown; usage?: Usage }
  | {
      kind: "error";
      status: number;
      style?: FakeErrorStyle;
      message?: string;
      type?: string;
      code?: string | number | null;
      headers?: Record<string, string>;
      /** Sent as it is instead of a styled error body. */
      body?: string;
      contentType?: string;
    }
  | { kind: "slow"; ms: number; then: FakeChatReply }
  | { kind: "streamError"; before: string; message?: string; type?: string }
  | { kind: "brokenStream"; before: string };

// The streamed answers of the fake OpenAI-compatible server (fake-openai-chat.ts; PROTOCOLS.md §3.2): a reply
// written as server-sent events of chat.completion.chunk objects, the way OpenAI streams one.

export function roughTokens(text: string) {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Every message's content, as the usage counts it. */
export function promptTextOf(body: Json): string {
  return ((body?.messages ?? []) as Array<{ content: unknown }>).map((m) => JSON.stringify(m.content)).join("");
}

/** Words with the whitespace after them: the pieces a streamed answer arrives in. */
export function streamPieces(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter(Boolean);
}

type StreamPlan = {
  content: string;
  refusal?: string;
  finishReason: string;
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** After the content: an in-stream error event, or a connection closed without [DONE]. */
  end?: { error: { message: string; type: string } } | "broken";
};

function planOf(answer: FakeChatReply): StreamPlan {
  switch (answer.kind) {
    case "json":
      return { content: JSON.stringify(answer.value), finishReason: "stop", usage: answer.usage };
    case "text":
      return { content: answer.content, finishReason: answer.finishReason ?? "stop", usage: answer.usage };
    case "refusal":
      return { content: "", refusal: answer.refusal, finishReason: "stop", usage: answer.usage };
    case "truncated": {
      const full = JSON.stringify(answer.value);
      return { content: full.slice(0, Math.max(1, Math.floor(full.length / 2))), finishReason: "length" };
    }
    case "streamError":
      return {
        content: answer.before,
        finishReason: "stop",
        end: { error: { message: answer.message ?? "error", type: answer.type ?? "server_error" } },
      };
    case "brokenStream":
      return { content: answer.before, finishReason: "stop", end: "broken" };
    default:
      throw new Error(`a ${answer.kind} reply is not streamed`);
  }
}

export async function streamAnswer(
  res: ServerResponse,
  body: Json,
  answer: FakeChatReply,
  options: { delayMs: number; timers: Set<NodeJS.Timeout>; promptText: string },
) {
  const plan = planOf(answer);
  const includeUsage = body.stream_options?.include_usage === true;
  const base = {
    id: `chatcmpl-fakestream${Date.now()}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    system_fingerprint: "fp_fake",
  };
  let closed = false;
  let waiting: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  // A client that goes away frees the pause under way: nothing waits past the test.
  res.on("close", () => {
    closed = true;
    if (!waiting) return;
    clearTimeout(waiting.timer);
    options.timers.delete(waiting.timer);
    waiting.resolve();
  });
  const pause = () =>
    new Promise<void>((resolve) => {
      if (options.delayMs <= 0 || closed) return resolve();
      const timer = setTimeout(() => {
        options.timers.delete(timer);
        waiting = undefined;
        resolve();
      }, options.delayMs);
      options.timers.add(timer);
      waiting = { timer, resolve };
    });
  const send = (data: unknown) => {
    if (!closed) res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
    send({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
      ...(includeUsage ? { usage: null } : {}),
    });

  res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache" });
  chunk({ role: "assistant", content: "", refusal: null }, null);
  for (const piece of streamPieces(plan.content)) {
    await pause();
    chunk({ content: piece }, null);
  }
  if (plan.refusal) chunk({ refusal: plan.refusal }, null);
  await pause();
  if (plan.end === "broken") return void res.destroy();
  if (plan.end) {
    send(plan.end);
    return void res.end();
  }
  chunk({}, plan.finishReason);
  if (includeUsage && plan.usage !== null) {
    const usage = plan.usage ?? {
      prompt_tokens: roughTokens(options.promptText),
      completion_tokens: roughTokens(plan.content || plan.refusal || ""),
    };
    send({ ...base, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
  }
  send("[DONE]");
  res.end();
}
