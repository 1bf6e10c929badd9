import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  promptTextOf,
  roughTokens,
  streamAnswer,
  type FakeChatReply,
  type FakeErrorStyle,
  type Json,
  type Usage,
} from "./fake-openai-stream";

export type { FakeChatReply, FakeErrorStyle, Json } from "./fake-openai-stream";

// A local OpenAI-compatible chat-completions server (POST /v1/chat/completions, GET /v1/models) that behaves as
// PROTOCOLS.md §3.2–3.4 describe OpenAI and the self-hosted servers. Reproduced:
// - `Authorization: Bearer <key>` when `apiKey` is set: a missing or wrong key → 401 {"error":{…,"type":
//   "invalid_request_error","code":"invalid_api_key"}}; `authStyle: "speaches"` → 403 {"detail"} instead.
// - Request checks as OpenAI makes them (400, OpenAI error body): a body that is not JSON; no `model`; no or
//   empty `messages`, a message without a known role or string content; `max_tokens` not a positive integer;
//   `response_format.type` other than text|json_object|json_schema; json_schema without `json_schema.schema`
//   or with a `name` outside [a-zA-Z0-9_-]{1,64}; json_object when no message mentions "json" (OpenAI's rule).
// - Answers come from `replies` (a queue, one per chat request, in order) and then from `responder(request)`;
//   the default responder returns the smallest value that satisfies the request's json_schema (or `{}` for
//   json_object, "OK" for plain chat). A reply is one of (helpers in `reply`):
//   json — the value as the content string, finish_reason "stop"; text — raw content (invalid JSON, prose,
//   a fenced block); refusal — content null, `refusal` set; truncated — the JSON cut in half with
//   finish_reason "length"; error — any status with an error body in the style of OpenAI, vLLM (old flat shape,
//   int code), llama.cpp ({code,message,type}), FastAPI ({detail}) or an HTML page, plus headers (Retry-After,
//   retry-after-ms, x-should-retry); slow — waits `ms` on a timer (cleared when the client goes away) and then
//   sends its inner reply. `reply.rateLimited`, `quotaExceeded`, `overloaded`, `loadingModel` are the common
//   failures. Every answer reports `usage` (a rough count: characters / 4), unless the reply says `usage: null`.
// - A server that ignores the schema (Ollama, llama.cpp with `strict`) is a responder that returns something
//   else: the schema is never enforced here.
// - Streaming (`stream: true`, PROTOCOLS.md §3.2, behaviour 6): a json/text/refusal/truncated reply goes out as
//   text/event-stream — a first chunk with the role, the content word by word (`streamDelayMs` apart), a last
//   chunk with finish_reason, with `stream_options.include_usage` one more chunk with `choices: []` and usage
//   (every other chunk then carries `"usage": null`), then `data: [DONE]`. Errors and slow replies work as without
//   streaming (an error before the first byte is a plain error answer); `streamError` sends some text and then an
//   in-stream `{"error":…}` event, `brokenStream` some text and then closes the connection without [DONE].
// Not reproduced: tools, n > 1, logprobs, exact wording of real messages.
// `requests` records every call: method, path, headers (the Authorization value masked) and the parsed body.

export type FakeChatRequest = {
  method: string;
  /** e.g. "/v1/chat/completions". */
  path: string;
  /** Lower-case names; `authorization` masked as "Bearer ***". */
  headers: Record<string, string>;
  /** Whether an `Authorization: Bearer …` header came with it. */
  bearer: boolean;
  /** The parsed JSON body (null for none or one that is not JSON). */
  body: Json;
  /** null while unanswered; also when the client went away first. */
  status: number | null;
  /** The client closed the connection before the answer was sent. */
  abandoned: boolean;
};

export type FakeChatResponder = (request: FakeChatRequest) => FakeChatReply | Promise<FakeChatReply>;

export type FakeChatOptions = {
  apiKey?: string | null;
  authStyle?: "openai" | "speaches";
  /** The default style of error bodies (each error reply may name its own). */
  errorStyle?: FakeErrorStyle;
  responder?: FakeChatResponder;
  /** Listed by GET /v1/models. */
  models?: string[];
  /** 0 (a free port) unless a fixed one is wanted (scripts/fake-llm-server.mjs). */
  port?: number;
  host?: string;
};

export interface FakeChatServer {
  /** The API root, `http://127.0.0.1:<port>/v1`. */
  readonly url: string;
  readonly requests: FakeChatRequest[];
  apiKey: string | null;
  authStyle: "openai" | "speaches";
  errorStyle: FakeErrorStyle;
  /** Answers for the next chat requests, in order; the responder answers when the queue is empty. */
  replies: FakeChatReply[];
  responder: FakeChatResponder;
  modelsEndpoint: boolean;
  models: string[];
  /** The pause between the chunks of a streamed answer (default 0). */
  streamDelayMs: number;
  /** The calls to /chat/completions. */
  chatRequests(): FakeChatRequest[];
  /** Timers of slow replies still waiting (0 once every client got its answer or went away). */
  pendingTimers(): number;
  close(): Promise<void>;
}

export const reply = {
  json(value: unknown, usage?: Usage): FakeChatReply {
    return { kind: "json", value, ...(usage !== undefined ? { usage } : {}) };
  },
  text(content: string, finishReason = "stop"): FakeChatReply {
    return { kind: "text", content, finishReason };
  },
  refusal(refusal = "I'm sorry, I can't help with that."): FakeChatReply {
    return { kind: "refusal", refusal };
  },
  truncated(value: unknown): FakeChatReply {
    return { kind: "truncated", value };
  },
  error(status: number, options: Omit<Extract<FakeChatReply, { kind: "error" }>, "kind" | "status"> = {}) {
    return { kind: "error", status, ...options } satisfies FakeChatReply;
  },
  slow(ms: number, then: FakeChatReply = { kind: "text", content: "OK" }): FakeChatReply {
    return { kind: "slow", ms, then };
  },
  /** Streaming only: `before` as content chunks, then an in-stream error event. */
  streamError(before: string, message = "The server had an error while processing your request."): FakeChatReply {
    return { kind: "streamError", before, message, type: "server_error" };
  },
  /** Streaming only: `before` as content chunks, then the connection closes without [DONE]. */
  brokenStream(before: string): FakeChatReply {
    return { kind: "brokenStream", before };
  },
  /** OpenAI's rate limit: Retry-After in seconds, and optionally retry-after-ms. */
  rateLimited(retryAfterSeconds: number, retryAfterMs?: number): FakeChatReply {
    const headers: Record<string, string> = { "retry-after": String(retryAfterSeconds) };
    if (retryAfterMs !== undefined) headers["retry-after-ms"] = String(retryAfterMs);
    return reply.error(429, {
      style: "openai",
      message: "Rate limit reached for gpt-4o-mini on tokens per min (TPM): Limit 200000, Used 200000, Requested 900.",
      type: "tokens",
      code: "rate_limit_exceeded",
      headers,
    });
  },
  /** Exhausted quota: a 429 that retrying cannot fix. */
  quotaExceeded(): FakeChatReply {
    return reply.error(429, {
      style: "openai",
      message: "You exceeded your current quota, please check your plan and billing details.",
      type: "insufficient_quota",
      code: "insufficient_quota",
    });
  },
  overloaded(): FakeChatReply {
    return reply.error(503, { style: "openai", message: "The engine is currently overloaded, please try again later" });
  },
  /** llama.cpp's answer while the model loads. */
  loadingModel(): FakeChatReply {
    return reply.error(503, { style: "llamacpp", message: "Loading model", type: "unavailable_error" });
  },
};

/** The smallest value that satisfies a schema of the JsonSchema subset (pattern is not honoured). */
export function minimalValue(schema: Json): unknown {
  if (!schema || typeof schema !== "object") return null;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const required: string[] = schema.required ?? Object.keys(schema.properties ?? {});
      for (const key of required) out[key] = minimalValue(schema.properties?.[key]);
      return out;
    }
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => minimalValue(schema.items));
    case "string":
      return "x".repeat(Math.max(schema.minLength ?? 1, 1));
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}

const defaultResponder: FakeChatResponder = (request) => {
  const format = request.body?.response_format;
  if (format?.type === "json_schema") return reply.json(minimalValue(format.json_schema.schema));
  if (format?.type === "json_object") return reply.json({});
  return reply.text("OK");
};

function defaultType(status: number) {
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

function llamaType(status: number) {
  const types: Record<number, string> = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    501: "not_supported_error",
    503: "unavailable_error",
  };
  return types[status] ?? "server_error";
}

class BadRequest extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);
const SCHEMA_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function checkChatBody(body: Json) {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new BadRequest("We could not parse the JSON body of your request.");
  if (typeof body.model !== "string" || !body.model)
    throw new BadRequest("you must provide a model parameter", "model");
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw new BadRequest("'messages' must be a non-empty array", "messages");
  body.messages.forEach((message: { role?: unknown; content?: unknown }, i: number) => {
    if (!ROLES.has(message?.role as string)) throw new BadRequest(`Invalid role in messages[${i}]`, `messages.[${i}]`);
    if (typeof message.content !== "string" && !Array.isArray(message.content))
      throw new BadRequest(`Invalid content in messages[${i}]`, `messages.[${i}].content`);
  });
  if (body.max_tokens !== undefined && !(Number.isInteger(body.max_tokens) && body.max_tokens > 0))
    throw new BadRequest("max_tokens must be a positive integer", "max_tokens");
  if (body.stream !== undefined && typeof body.stream !== "boolean")
    throw new BadRequest("stream must be a boolean", "stream");
  if (body.stream_options !== undefined && !body.stream)
    throw new BadRequest("stream_options is only allowed when stream is true", "stream_options");
  const format = body.response_format;
  if (format !== undefined) {
    if (!["text", "json_object", "json_schema"].includes(format?.type))
      throw new BadRequest("response_format.type must be one of text, json_object, json_schema", "response_format");
    if (format.type === "json_schema") {
      if (typeof format.json_schema?.schema !== "object" || format.json_schema.schema === null)
        throw new BadRequest("Missing required parameter: 'response_format.json_schema.schema'", "response_format");
      if (typeof format.json_schema.name !== "string" || !SCHEMA_NAME.test(format.json_schema.name))
        throw new BadRequest("Invalid 'response_format.json_schema.name'", "response_format.json_schema.name");
    }
    if (format.type === "json_object") {
      const mentions = body.messages.some((m: { content: unknown }) => /json/i.test(JSON.stringify(m.content)));
      if (!mentions)
        throw new BadRequest(
          "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
          "messages",
        );
    }
  }
}

export async function startFakeOpenAiChatServer(options: FakeChatOptions = {}): Promise<FakeChatServer> {
  const requests: FakeChatRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    void handle(req, res);
  });

  const state: FakeChatServer = {
    url: "",
    requests,
    apiKey: options.apiKey ?? null,
    authStyle: options.authStyle ?? "openai",
    errorStyle: options.errorStyle ?? "openai",
    replies: [],
    responder: options.responder ?? defaultResponder,
    modelsEndpoint: true,
    models: options.models ?? ["gpt-4o-mini"],
    streamDelayMs: 0,
    chatRequests() {
      return requests.filter((r) => r.path === "/v1/chat/completions");
    },
    pendingTimers() {
      return timers.size;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };

  function send(res: ServerResponse, status: number, body: string, type: string, headers: Record<string, string> = {}) {
    if (res.destroyed || res.headersSent) return;
    res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body), ...headers });
    res.end(body);
  }

  function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    send(res, status, JSON.stringify(body), "application/json", headers);
  }

  function sendError(res: ServerResponse, failure: Extract<FakeChatReply, { kind: "error" }>) {
    const headers = failure.headers ?? {};
    const { status } = failure;
    if (failure.body !== undefined)
      return send(res, status, failure.body, failure.contentType ?? "application/json", headers);
    const message = failure.message ?? `Simulated failure ${status}`;
    switch (failure.style ?? state.errorStyle) {
      case "openai":
        return sendJson(
          res,
          status,
          { error: { message, type: failure.type ?? defaultType(status), param: null, code: failure.code ?? null } },
          headers,
        );
      case "vllm":
        return sendJson(
          res,
          status,
          {
            object: "error",
            message,
            type: failure.type ?? "BadRequestError",
            param: null,
            code: typeof failure.code === "number" ? failure.code : status,
          },
          headers,
        );
      case "llamacpp":
        return sendJson(
          res,
          status,
          { error: { code: status, message, type: failure.type ?? llamaType(status) } },
          headers,
        );
      case "fastapi":
        return sendJson(res, status, { detail: message }, headers);
      case "html":
        return send(
          res,
          status,
          `<html><head><title>${status}</title></head><body><h1>${status}</h1>${message}</body></html>`,
          "text/html",
          headers,
        );
    }
  }

  function authFailure(bearer: string | null): FakeChatReply | null {
    if (!state.apiKey || bearer === state.apiKey) return null;
    if (state.authStyle === "speaches") return reply.error(403, { style: "fastapi", message: "Invalid API key" });
    return reply.error(401, {
      style: "openai",
      message: bearer
        ? "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
        : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
      type: "invalid_request_error",
      code: "invalid_api_key",
    });
  }

  function completion(
    body: Json,
    content: string | null,
    extra: { refusal?: string; finishReason: string; usage?: Usage },
  ) {
    const promptText = promptTextOf(body);
    const usage =
      extra.usage === null
        ? undefined
        : (extra.usage ?? {
            prompt_tokens: roughTokens(promptText),
            completion_tokens: roughTokens(content ?? extra.refusal ?? ""),
          });
    return {
      id: `chatcmpl-fake${requests.length}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, refusal: extra.refusal ?? null },
          finish_reason: extra.finishReason,
          logprobs: null,
        },
      ],
      ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
      system_fingerprint: "fp_fake",
    };
  }

  function answer(res: ServerResponse, body: Json, answerWith: FakeChatReply) {
    if (body?.stream === true && answerWith.kind !== "error" && answerWith.kind !== "slow") {
      return void streamAnswer(res, body, answerWith, {
        delayMs: state.streamDelayMs,
        timers,
        promptText: promptTextOf(body),
      });
    }
    switch (answerWith.kind) {
      case "json":
        return sendJson(
          res,
          200,
          completion(body, JSON.stringify(answerWith.value), { finishReason: "stop", usage: answerWith.usage }),
        );
      case "text":
        return sendJson(
          res,
          200,
          completion(body, answerWith.content, {
            finishReason: answerWith.finishReason ?? "stop",
            usage: answerWith.usage,
          }),
        );
      case "refusal":
        return sendJson(
          res,
          200,
          completion(body, null, { refusal: answerWith.refusal, finishReason: "stop", usage: answerWith.usage }),
        );
      case "truncated": {
        const full = JSON.stringify(answerWith.value);
        const cut = full.slice(0, Math.max(1, Math.floor(full.length / 2)));
        return sendJson(res, 200, completion(body, cut, { finishReason: "length", usage: answerWith.usage }));
      }
      case "error":
        return sendError(res, answerWith);
      case "streamError":
      case "brokenStream":
        return sendJson(res, 400, {
          error: {
            message: `${answerWith.kind} needs stream: true`,
            type: "invalid_request_error",
            param: null,
            code: null,
          },
        });
      case "slow": {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer(res, body, answerWith.then);
        }, answerWith.ms);
        timers.add(timer);
        // A client that gives up (time-out, abort) frees the timer: nothing waits past the test.
        res.on("close", () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
        return;
      }
    }
  }

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://fake");
    const method = (req.method ?? "GET").toUpperCase();
    const header = req.headers.authorization;
    const bearer = header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : null;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      headers[name] = name === "authorization" ? "Bearer ***" : Array.isArray(value) ? value.join(", ") : value;
    }
    const entry: FakeChatRequest = {
      method,
      path: url.pathname.replace(/\/+$/, ""),
      headers,
      bearer: bearer !== null,
      body: null,
      status: null,
      abandoned: false,
    };
    requests.push(entry);
    res.on("finish", () => {
      entry.status = res.statusCode;
    });
    res.on("close", () => {
      if (!res.writableFinished) entry.abandoned = true;
    });
    try {
      const raw = await readBody(req);
      if (raw) {
        try {
          entry.body = JSON.parse(raw);
        } catch {
          entry.body = null;
        }
      }
      const auth = authFailure(bearer);
      if (auth) return answer(res, entry.body, auth);

      if (entry.path === "/v1/models") {
        if (!state.modelsEndpoint) return answer(res, null, reply.error(404, { message: "Not Found" }));
        if (method !== "GET") return answer(res, null, reply.error(405, { message: "Method Not Allowed" }));
        return sendJson(res, 200, {
          object: "list",
          data: state.models.map((id) => ({ id, object: "model", created: 1_700_000_000, owned_by: "system" })),
        });
      }
      if (entry.path !== "/v1/chat/completions")
        return answer(res, null, reply.error(404, { message: `Unknown path ${entry.path}` }));
      if (method !== "POST") return answer(res, null, reply.error(405, { message: "Method Not Allowed" }));
      try {
        checkChatBody(raw ? entry.body : null);
      } catch (error) {
        if (!(error instanceof BadRequest)) throw error;
        return sendJson(res, 400, {
          error: { message: error.message, type: "invalid_request_error", param: error.param, code: null },
        });
      }
      const next = state.replies.shift() ?? (await state.responder(entry));
      answer(res, entry.body, next);
    } catch (error) {
      if (!res.headersSent)
        sendError(res, reply.error(500, { message: `Fake server failure: ${(error as Error).message}` }));
      else res.destroy();
    }
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(state, { url: `http://127.0.0.1:${port}/v1` });
  return state;
}
