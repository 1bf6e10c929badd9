import type { Response } from "undici";

import {
  fetchWithTimeout,
  httpErrorFactory,
  redactApiKey,
  type EngineErrorFactory,
  type RetryPolicy,
} from "../speech/retry";
import { readCompletionStream, type Completion } from "./openai-stream.server";
import { LlmError, type TextSink } from "./types";

export type StructuredOutputMode = "json_schema" | "json_object" | "none";

export type OpenAiChatConfig = {
  /** The API root, e.g. https://api.openai.com/v1 or http://llm.local:8000/v1 */
  baseUrl: string;
  apiKey?: string;
  model: string;
  structuredOutput: StructuredOutputMode;
  contextTokens: number;
  /** For one request and its answer. */
  timeoutMs: number;
  /** Transient failures of one request (openai-node's default: 3 attempts, 0.5–8 s). */
  retry?: RetryPolicy;
  /** Requests for one structured answer that fails validation (default 3). */
  structuredAttempts?: number;
};

// The HTTP side of the OpenAI-compatible chat model (openai-chat.server.ts): one POST
// {baseUrl}/chat/completions with no retries, its answer read as JSON or as a stream, and how a failed
// request reads (the key redacted, a hint at the setting to check).

export const USER_NOT_CONFIGURED = "letters:errors.engineNotConfigured";

export const llmError: EngineErrorFactory = (kind, message, options) => new LlmError(kind, message, options);

function contentText(content: unknown): string | null {
  if (typeof content === "string") return content;
  // A few servers send content parts; text parts are joined, others ignored.
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof (part as { text?: unknown })?.text === "string" ? (part as { text: string }).text : ""))
      .join("");
  }
  return null;
}

export function createOpenAiChatClient(config: Pick<OpenAiChatConfig, "baseUrl" | "apiKey" | "timeoutMs">) {
  const baseUrl = config.baseUrl.trim().replace(/\/+$/, "");
  const host = safeHost(baseUrl);

  function safeHost(url: string) {
    try {
      return new URL(url).host;
    } catch {
      return "the language model server";
    }
  }

  function headers(json: boolean, accept = "application/json"): Record<string, string> {
    const out: Record<string, string> = { Accept: accept };
    if (json) out["Content-Type"] = "application/json";
    if (config.apiKey) out.Authorization = `Bearer ${config.apiKey}`;
    return out;
  }

  /** Keeps the key out of messages, even in the masked form OpenAI echoes back. */
  const redact = (text: string) => redactApiKey(text, config.apiKey);

  const httpError = httpErrorFactory(LlmError, {
    host,
    apiKey: config.apiKey,
    settings: {
      apiKey: "LLM_OPENAI_API_KEY",
      url: "LLM_OPENAI_URL",
      notFound: "LLM_OPENAI_URL (with /v1) and LLM_OPENAI_MODEL",
    },
    notConfiguredKey: USER_NOT_CONFIGURED,
    special(status, detail, said) {
      if (status === 400 && /response_format|json_schema|json_object/i.test(detail)) {
        return `${host} refused the structured-output request (400)${said}. Try LLM_OPENAI_STRUCTURED_OUTPUT=json_object or none.`;
      }
      if (status === 400 && /context|too long|n_ctx|maximum.*tokens/i.test(detail)) {
        return `${host}: the request does not fit the model's context (400)${said}. Check LLM_CONTEXT_TOKENS.`;
      }
      return undefined;
    },
  });

  async function readBody(response: Response, signal: AbortSignal | undefined): Promise<string> {
    try {
      return await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      throw new LlmError("transient", `The answer from ${host} broke off or did not complete in time`, {
        cause: error,
      });
    }
  }

  /** One request, no retries: the response once its status is a success. */
  async function send(body: Record<string, unknown>, signal: AbortSignal | undefined, accept?: string) {
    const response = await fetchWithTimeout(`${baseUrl}/chat/completions`, {
      method: "POST",
      headers: headers(true, accept),
      body: JSON.stringify(body),
      timeoutMs: config.timeoutMs,
      signal,
      makeError: llmError,
    });
    if (response.status < 200 || response.status >= 300) throw httpError(response, await readBody(response, signal));
    return response;
  }

  async function post(body: Record<string, unknown>, signal: AbortSignal | undefined): Promise<Completion> {
    const response = await send(body, signal);
    return parseCompletion(response, await readBody(response, signal));
  }

  /** One streamed request, no retries; a JSON answer (a server that does not stream) counts as one piece. */
  async function postStreaming(body: Record<string, unknown>, signal: AbortSignal | undefined, onText: TextSink) {
    const response = await send(body, signal, "text/event-stream");
    if (/text\/event-stream/i.test(response.headers.get("content-type") ?? ""))
      return readCompletionStream(response, { host, onText, signal });
    const completion = parseCompletion(response, await readBody(response, signal));
    if (completion.content) onText(completion.content);
    return completion;
  }

  function parseCompletion(response: Response, text: string): Completion {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      if (/text\/html/i.test(response.headers.get("content-type") ?? "") || /^\s*</.test(text)) {
        // A web page with 200: the address leads to a website or a login portal, not to the API.
        throw new LlmError("permanent", `${host} answered with a web page, not the API. Check LLM_OPENAI_URL.`, {
          cause: error,
        });
      }
      // Most likely cut off on the way (a proxy, a restarting server): worth another try.
      throw new LlmError("transient", `${host} answered 200 without valid JSON`, { cause: error });
    }
    const choice = (json as { choices?: unknown })?.choices;
    const first = Array.isArray(choice) ? (choice[0] as Record<string, unknown> | undefined) : undefined;
    const message = first?.message as Record<string, unknown> | undefined;
    if (!first || typeof message !== "object" || message === null) {
      throw new LlmError("permanent", `${host} answered without choices[0].message: not a chat-completions answer`);
    }
    const usage = (json as { usage?: unknown }).usage;
    return {
      content: contentText(message.content),
      refusal: typeof message.refusal === "string" && message.refusal ? message.refusal : null,
      finishReason: typeof first.finish_reason === "string" ? first.finish_reason : null,
      usage: typeof usage === "object" && usage !== null ? (usage as Completion["usage"]) : null,
    };
  }

  return { baseUrl, host, headers, redact, post, postStreaming };
}

/** The ids of GET /models ({"data":[{"id"}]}); undefined for any other shape. */
export function modelIds(body: string): string[] | undefined {
  try {
    const data = (JSON.parse(body) as { data?: unknown }).data;
    if (!Array.isArray(data)) return undefined;
    return data.map((m) => (m as { id?: unknown })?.id).filter((id): id is string => typeof id === "string");
  } catch {
    return undefined;
  }
}
