// The language-model interface (issue 6): structured generation against a JSON schema, and plain chat (issue 8:
// also streamed).
// Two implementations, chosen by LLM_ENGINE: any OpenAI-compatible chat-completions server
// (`openai-chat.server.ts`) and the embedded llama.cpp engine (`local-llm.server.ts`). Callers never see
// which one answered, except through `name` (usage and health).

export type ChatRole = "system" | "user" | "assistant";
export type ChatMessage = { role: ChatRole; content: string };

/** The subset of JSON Schema the letter schemas use, and that both engines (and `json-schema.ts`) enforce. */
export type JsonSchema = {
  type?: "object" | "array" | "string" | "boolean" | "number" | "integer" | "null";
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  enum?: Array<string | number | boolean>;
  const?: string | number | boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  description?: string;
};

export type TokenUsage = { promptTokens: number; completionTokens: number };

export type StructuredRequest = {
  messages: ChatMessage[];
  schema: JsonSchema;
  /** [a-zA-Z0-9_-], at most 64 characters (OpenAI's json_schema.name). */
  schemaName: string;
  /** Upper bound for the answer's tokens. */
  maxTokens: number;
  temperature?: number;
  signal?: AbortSignal;
};

export type StructuredResult<T = unknown> = {
  /** Parsed and validated against the request's schema (the engine validates before returning). */
  value: T;
  usage: TokenUsage;
  /** The model's identifier as configured. */
  model: string;
};

export type ChatRequest = { messages: ChatMessage[]; maxTokens: number; temperature?: number; signal?: AbortSignal };
export type ChatResult = { content: string; usage: TokenUsage; model: string };
/** Receives an answer piece by piece, as the model writes it. */
export type TextSink = (text: string) => void;

export type LlmEngineName = "openai" | "local";
export type LlmHealth = { status: "healthy" | "error" | "not_configured"; detail?: string };

export interface LanguageModel {
  readonly name: LlmEngineName;
  /**
   * Whether the engine can be asked to name the transcript lines a statement rests on (issue 24: structured output
   * with sources). The small local model cannot follow that reliably; an OpenAI-compatible server's model is asked.
   */
  readonly citesSources?: boolean;
  /** The context window in tokens: every request (prompt + maxTokens) must fit into it. */
  readonly contextTokens: number;
  /**
   * A conservative token count for text under this model's tokenizer (the local engine counts exactly;
   * remote engines estimate on the safe side). Used to plan requests that fit `contextTokens`.
   */
  countTokens(text: string): number;
  generateStructured<T = unknown>(request: StructuredRequest): Promise<StructuredResult<T>>;
  chat(request: ChatRequest): Promise<ChatResult>;
  /**
   * `chat`, streamed: each piece of the answer goes to `onText` as soon as the model writes it, and the whole
   * answer comes back as from `chat`. Failures before the first piece are retried as in `chat`; once text has
   * been handed out, a failure ends the call (the caller already showed that text).
   */
  chatStream?(request: ChatRequest, onText: TextSink): Promise<ChatResult>;
  /** A live check with a time-out, for /api/health; never throws. */
  check(timeoutMs?: number): Promise<LlmHealth>;
}

/**
 * - transient: worth retrying (network, time-out, 429 that is not a quota, 5xx);
 * - permanent: retrying cannot help (4xx, quota exhausted, refusal, context too small);
 * - invalid_output: the model answered, but not with JSON that satisfies the schema (after the engine's
 *   own bounded retries) — SPEC §7's 'Structured output processing failed';
 * - not_configured: the operator must act (missing model file, missing URL or key).
 * `message` is for logs and the operator; `userMessageKey` (i18n key) is what a clinician sees.
 */
export type LlmErrorKind = "transient" | "permanent" | "invalid_output" | "not_configured";

export class LlmError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly options: { status?: number; userMessageKey?: string; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message);
    this.name = "LlmError";
  }
  get retryAfterMs() {
    return this.options.retryAfterMs;
  }
}
