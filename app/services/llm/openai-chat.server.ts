import { DEFAULT_RETRY, errorBodyInfo, fetchWithTimeout, withRetries, type RetryPolicy } from "../speech/retry";
import { readStructuredAnswer } from "./json-schema";
import { RETRY_TEMPERATURE, structuredAttempts, untilValidAnswer } from "./structured-attempts";
import type { OpenAiChatConfig } from "./openai-chat-client.server";
import { createOpenAiChatClient, llmError, modelIds, USER_NOT_CONFIGURED } from "./openai-chat-client.server";
import type { Completion } from "./openai-stream.server";
import { estimateMessagesTokens, estimateTokens } from "./tokens";
import {
  LlmError,
  type ChatMessage,
  type ChatRequest,
  type ChatResult,
  type JsonSchema,
  type LanguageModel,
  type LlmHealth,
  type StructuredRequest,
  type StructuredResult,
  type TextSink,
  type TokenUsage,
} from "./types";

export type { OpenAiChatConfig, StructuredOutputMode } from "./openai-chat-client.server";

// The language model behind any OpenAI-compatible chat-completions server (PROTOCOLS.md §3.2–3.4): OpenAI,
// Azure OpenAI, Mistral, vLLM, llama.cpp's llama-server, Ollama. One POST {baseUrl}/chat/completions per
// attempt (openai-chat-client.server.ts). `baseUrl` is the API root including /v1, as for the speech engine.
// Plain chat can also stream (`stream: true`, openai-stream.server.ts); a server that ignores `stream` and
// answers JSON is read as usual.
// - Structured answers: `structuredOutput` picks how the schema reaches the server — json_schema
//   (response_format json_schema, strict), json_object (JSON mode, the schema in an extra system message) or
//   none (only that message). Whatever the server promised, the answer is parsed and validated here
//   (json-schema.ts): Ollama and llama.cpp ignore `strict`, and JSON mode promises no shape at all. Invalid
//   JSON, a schema mismatch, a truncated answer (finish_reason "length"), a refusal or a content filter count
//   as one failed attempt; after STRUCTURED_ATTEMPTS the call fails with `invalid_output`. Retries after
//   such a failure raise a temperature below 0.4 to 0.4: at temperature 0 the same prompt gives the same answer.
// - HTTP failures follow openai-node: 408, 409, 429 and 5xx are transient, with Retry-After/retry-after-ms
//   honoured up to 60 s; other 4xx are permanent; `x-should-retry` overrides both; a 429 for an exhausted
//   quota is permanent whatever the headers say. Transient failures are retried within `retry` for each
//   attempt, so the number of requests stays bounded (attempts × retry.attempts).
// - The context guard: a request whose estimated prompt plus maxTokens exceeds `contextTokens` is refused
//   before anything is sent (tokens.ts estimates on the high side). The JSON schema in json_schema mode is not
//   counted (it travels outside the messages); in the other modes it is part of the extra message.
// - Usage is the server's `usage`; a server that sends none gets the estimate, summed over all attempts.
// - `max_tokens` is sent (every compatible server reads it; OpenAI's reasoning models want
//   max_completion_tokens and are not a target here).

const DEFAULT_CHAT_RETRY: RetryPolicy = { ...DEFAULT_RETRY, attempts: 3 };
const DEFAULT_CHECK_TIMEOUT_MS = 5_000;

/** The instruction that carries the schema when the server does not take it in response_format. */
export function schemaInstruction(schema: JsonSchema): string {
  return (
    "Answer with a single JSON value and nothing else: no explanation, no Markdown, no code fence. " +
    `It must validate against this JSON Schema:\n${JSON.stringify(schema)}`
  );
}

/** OpenAI's json_schema.name: [a-zA-Z0-9_-], at most 64 characters. */
function schemaName(name: string) {
  return name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "answer";
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

export function createOpenAiChatModel(config: OpenAiChatConfig): LanguageModel {
  const { baseUrl, host, headers, redact, post, postStreaming } = createOpenAiChatClient(config);
  const policy = config.retry ?? DEFAULT_CHAT_RETRY;
  const attempts = structuredAttempts(config.structuredAttempts);

  function requireUrl() {
    if (!baseUrl)
      throw new LlmError("not_configured", "LLM_OPENAI_URL is not set", { userMessageKey: USER_NOT_CONFIGURED });
  }

  function usageOf(completion: Completion, promptEstimate: number): TokenUsage {
    return {
      promptTokens: count(completion.usage?.prompt_tokens) ?? promptEstimate,
      completionTokens:
        count(completion.usage?.completion_tokens) ?? estimateTokens(completion.content ?? completion.refusal ?? ""),
    };
  }

  /** The guard: callers plan requests to fit, so one that does not is a bug or a changed setting. */
  function guard(messages: ChatMessage[], maxTokens: number): number {
    const prompt = estimateMessagesTokens(messages);
    if (prompt + maxTokens > config.contextTokens) {
      throw new LlmError(
        "permanent",
        `The request does not fit the context window: about ${prompt} prompt tokens + ${maxTokens} for the ` +
          `answer > ${config.contextTokens} (LLM_CONTEXT_TOKENS)`,
      );
    }
    return prompt;
  }

  function structuredMessages(request: StructuredRequest): ChatMessage[] {
    if (config.structuredOutput === "json_schema") return request.messages;
    // The instruction goes right after the caller's leading system messages: some chat templates accept
    // system messages only at the start.
    const lead = request.messages.findIndex((m) => m.role !== "system");
    const at = lead === -1 ? request.messages.length : lead;
    const instruction: ChatMessage = { role: "system", content: schemaInstruction(request.schema) };
    return [...request.messages.slice(0, at), instruction, ...request.messages.slice(at)];
  }

  function responseFormat(request: StructuredRequest) {
    switch (config.structuredOutput) {
      case "json_schema":
        return {
          type: "json_schema",
          json_schema: { name: schemaName(request.schemaName), schema: request.schema, strict: true },
        };
      case "json_object":
        return { type: "json_object" };
      case "none":
        return undefined;
    }
  }

  /** What is wrong with a structured answer, or its value. */
  function verdict(completion: Completion, schema: JsonSchema): { value: unknown } | { problem: string } {
    if (completion.refusal) return { problem: "the model refused" };
    if (completion.finishReason === "length") return { problem: "the answer was cut off at max_tokens" };
    if (completion.finishReason === "content_filter") return { problem: "the answer was withheld by a content filter" };
    const read = readStructuredAnswer(completion.content ?? "", schema);
    return read.ok ? { value: read.value } : { problem: read.problem };
  }

  /** Plain chat, streamed when `onText` is given: retried only while no text has been handed out. */
  async function chat(request: ChatRequest, onText?: TextSink): Promise<ChatResult> {
    requireUrl();
    const promptEstimate = guard(request.messages, request.maxTokens);
    const body: Record<string, unknown> = {
      model: config.model,
      messages: request.messages,
      max_tokens: request.maxTokens,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(onText ? { stream: true, stream_options: { include_usage: true } } : {}),
    };
    let emitted = false;
    const attempt = async () => {
      if (!onText) return post(body, request.signal);
      try {
        return await postStreaming(body, request.signal, (text) => {
          emitted = true;
          onText(text);
        });
      } catch (error) {
        // The caller has shown part of an answer: another attempt would write a different one after it.
        if (emitted && error instanceof LlmError && error.kind === "transient")
          throw new LlmError("permanent", error.message, { cause: error });
        throw error;
      }
    };
    const completion = await withRetries(attempt, { policy, signal: request.signal });
    if (completion.refusal && !completion.content) {
      throw new LlmError("permanent", `${host}: the model refused to answer`);
    }
    return { content: completion.content ?? "", usage: usageOf(completion, promptEstimate), model: config.model };
  }

  return {
    name: "openai",
    citesSources: true,
    contextTokens: config.contextTokens,

    countTokens: estimateTokens,

    async generateStructured<T = unknown>(request: StructuredRequest): Promise<StructuredResult<T>> {
      requireUrl();
      const messages = structuredMessages(request);
      const promptEstimate = guard(messages, request.maxTokens);
      const format = responseFormat(request);
      return untilValidAnswer<T>({ name: host, model: config.model, attempts }, async (attempt) => {
        const temperature =
          attempt > 1 && request.temperature !== undefined
            ? Math.max(request.temperature, RETRY_TEMPERATURE)
            : request.temperature;
        const body: Record<string, unknown> = {
          model: config.model,
          messages,
          max_tokens: request.maxTokens,
          ...(temperature !== undefined ? { temperature } : {}),
          ...(format ? { response_format: format } : {}),
        };
        const completion = await withRetries(() => post(body, request.signal), { policy, signal: request.signal });
        const result = verdict(completion, request.schema);
        if (!("value" in result) && request.signal?.aborted) throw request.signal.reason;
        return { usage: usageOf(completion, promptEstimate), ...result };
      });
    },

    chat(request): Promise<ChatResult> {
      return chat(request);
    },

    chatStream(request, onText): Promise<ChatResult> {
      return chat(request, onText);
    },

    async check(checkTimeoutMs = DEFAULT_CHECK_TIMEOUT_MS): Promise<LlmHealth> {
      if (!baseUrl) return { status: "not_configured", detail: "LLM_OPENAI_URL is not set" };
      try {
        const response = await fetchWithTimeout(`${baseUrl}/models`, {
          method: "GET",
          headers: headers(false),
          timeoutMs: checkTimeoutMs,
          makeError: llmError,
        });
        const body = await response.text().catch(() => "");
        const { status } = response;
        if (status >= 200 && status < 300) {
          const ids = modelIds(body);
          if (ids && ids.length > 0 && !ids.includes(config.model))
            return { status: "healthy", detail: `model ${config.model} is not among the ${ids.length} listed` };
          return { status: "healthy" };
        }
        // Not every compatible server lists models; one that answers at all is up.
        if (status === 404 || status === 405) return { status: "healthy", detail: "no /models endpoint" };
        if (status === 401 || status === 403)
          return { status: "error", detail: `${host} refused the API key (${status})` };
        const said = errorBodyInfo(body).message;
        return { status: "error", detail: `${host} answered ${status}${said ? `: ${redact(said)}` : ""}` };
      } catch (error) {
        return { status: "error", detail: error instanceof LlmError ? error.message : `Cannot reach ${host}` };
      }
    },
  };
}
