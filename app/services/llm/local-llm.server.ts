import { access, constants } from "node:fs/promises";
import path from "node:path";

import type { ChatHistoryItem, GbnfJsonSchema, LlamaGrammar } from "node-llama-cpp";

import { readStructuredAnswer } from "./json-schema";
import { RETRY_TEMPERATURE, structuredAttempts, untilValidAnswer } from "./structured-attempts";
import type { LocalLlmConfig } from "./local-llm-runtime.server";
import { grammarSchema } from "./local-llm-grammar.server";
import {
  ensureLoaded,
  getLlamaOnce,
  loadFailure,
  loadedModel,
  missingModel,
  serialised,
  type Loaded,
} from "./local-llm-runtime.server";
import { estimateTokens } from "./tokens";
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
} from "./types";

export type { LocalLlmConfig } from "./local-llm-runtime.server";

// The embedded language model: a GGUF file run by llama.cpp through node-llama-cpp 3.22.1, on the CPU.
// - llama.cpp, the model and the queue of requests are process-wide (local-llm-runtime.server.ts).
// - The context holds min(contextTokens, the model's training context). Until the model is loaded,
//   `contextTokens` is the configured value and `countTokens` the conservative estimate of tokens.ts; after
//   it, both are exact (model.tokenize). A request whose rendered prompt plus maxTokens does not fit is refused
//   before generation (no silent context shift).
// - Structured answers: the JSON schema becomes a llama.cpp grammar (createGrammarForJsonSchema), so the
//   output is JSON of the schema's shape, in property order. The grammar does not enforce `pattern` (nor
//   stop a cut-off at maxTokens), so every answer is validated again (json-schema.ts); a failed one is asked
//   again, with temperature ≥ 0.4 and another seed, up to STRUCTURED_ATTEMPTS in all, then `invalid_output`.
// - Failures: a missing model file, or one llama.cpp cannot load, is `not_configured` (the operator runs
//   `npm run models -- --only llm`); so is a context that does not fit into memory. check() looks at the file
//   (present, a GGUF header) and at the outcome of a load already tried; it does not load gigabytes of weights
//   into whichever process serves /api/health.

export type LocalLanguageModel = LanguageModel & {
  /** Loads the model now (normally on first use), so that countTokens and contextTokens are exact. */
  load(): Promise<void>;
};

function history(messages: ChatMessage[]): ChatHistoryItem[] {
  return messages.map((m): ChatHistoryItem => {
    if (m.role === "system") return { type: "system", text: m.content };
    if (m.role === "user") return { type: "user", text: m.content };
    return { type: "model", response: [m.content] };
  });
}

// ---- The engine -------------------------------------------------------------------------------------------

export function createLocalLanguageModel(config: LocalLlmConfig): LocalLanguageModel {
  const key = JSON.stringify([config.model, config.contextTokens, config.threads, Boolean(config.extendContext)]);
  const attempts = structuredAttempts(config.structuredAttempts);
  const modelName = path.basename(config.model);

  /** The model when this engine's model is the one loaded, else undefined (never starts a load). */
  function ready(): Loaded | undefined {
    return loadedModel(key);
  }

  const loaded = () => ensureLoaded(config, key);

  /** The exact prompt as the model's chat template renders it, and the guard against an overflow. */
  function promptTokens(target: Loaded, items: ChatHistoryItem[], maxTokens: number): number {
    const state = target.chat.chatWrapper.generateContextState({
      chatHistory: [...items, { type: "model", response: [] }],
    });
    const prompt = state.contextText.tokenize(target.model.tokenizer).length;
    if (prompt + maxTokens > target.contextSize) {
      const hint =
        target.contextSize < config.contextTokens
          ? ` The model was trained for ${target.contextSize} tokens, fewer than LLM_CONTEXT_TOKENS=${config.contextTokens}: lower it.`
          : "";
      throw new LlmError(
        "permanent",
        `The request does not fit the context window: ${prompt} prompt tokens + ${maxTokens} for the answer > ` +
          `${target.contextSize}.${hint}`,
      );
    }
    return prompt;
  }

  function grammarFor(target: Loaded, schema: JsonSchema): Promise<LlamaGrammar> {
    const cacheKey = JSON.stringify(schema);
    let grammar = target.grammars.get(cacheKey);
    if (!grammar) {
      grammar = getLlamaOnce().then((instance) =>
        instance.createGrammarForJsonSchema<GbnfJsonSchema>(grammarSchema(schema)),
      );
      grammar.catch(() => target.grammars.delete(cacheKey));
      if (target.grammars.size >= 32) target.grammars.delete(target.grammars.keys().next().value!);
      target.grammars.set(cacheKey, grammar);
    }
    return grammar;
  }

  async function generate(
    target: Loaded,
    items: ChatHistoryItem[],
    options: {
      maxTokens: number;
      temperature: number;
      seed?: number;
      grammar?: LlamaGrammar;
      signal?: AbortSignal;
      /** Streaming (chatStream): each piece of text as it is sampled. */
      onText?: TextSink;
    },
  ) {
    // The tokens as sampled: re-tokenizing the answer's text can give a different count.
    let generated = 0;
    try {
      const response = await target.chat.generateResponse(items, {
        onToken: (tokens) => {
          generated += tokens.length;
        },
        maxTokens: options.maxTokens,
        temperature: options.temperature,
        ...(options.seed !== undefined ? { seed: options.seed } : {}),
        ...(options.grammar ? { grammar: options.grammar } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onText ? { onTextChunk: options.onText } : {}),
      });
      return {
        text: response.response,
        cutOff: response.metadata.stopReason === "maxTokens",
        completionTokens: generated,
      };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new LlmError("permanent", `llama.cpp failed to generate (${(error as Error).message})`, { cause: error });
    }
  }

  /** A plain answer; streamed through llama.cpp's text-chunk callback when `onText` is given. */
  function chat(request: ChatRequest, onText?: TextSink): Promise<ChatResult> {
    return serialised(async () => {
      const target = await loaded();
      const items = history(request.messages);
      const prompt = promptTokens(target, items, request.maxTokens);
      const answer = await generate(target, items, {
        maxTokens: request.maxTokens,
        temperature: request.temperature ?? 0,
        signal: request.signal,
        onText,
      });
      return {
        content: answer.text,
        usage: { promptTokens: prompt, completionTokens: answer.completionTokens },
        model: modelName,
      };
    }, request.signal);
  }

  return {
    name: "local",

    get contextTokens() {
      return ready()?.contextSize ?? config.contextTokens;
    },

    countTokens(text: string) {
      const target = ready();
      return target ? target.model.tokenize(text).length : estimateTokens(text);
    },

    async load() {
      await serialised(() => loaded(), undefined);
    },

    generateStructured<T = unknown>(request: StructuredRequest): Promise<StructuredResult<T>> {
      return serialised(async () => {
        const target = await loaded();
        const items = history(request.messages);
        const prompt = promptTokens(target, items, request.maxTokens);
        const grammar = await grammarFor(target, request.schema);
        return untilValidAnswer<T>({ name: modelName, model: modelName, attempts }, async (attempt) => {
          const base = request.temperature ?? 0;
          const answer = await generate(target, items, {
            maxTokens: request.maxTokens,
            temperature: attempt === 1 ? base : Math.max(base, RETRY_TEMPERATURE),
            ...(attempt > 1 ? { seed: attempt } : {}),
            grammar,
            signal: request.signal,
          });
          const usage = { promptTokens: prompt, completionTokens: answer.completionTokens };
          if (answer.cutOff) return { usage, problem: `the answer was cut off at ${request.maxTokens} tokens` };
          const read = readStructuredAnswer(answer.text, request.schema);
          return read.ok ? { usage, value: read.value } : { usage, problem: read.problem };
        });
      }, request.signal);
    },

    chat(request): Promise<ChatResult> {
      return chat(request);
    },

    chatStream(request, onText): Promise<ChatResult> {
      return chat(request, onText);
    },

    async check(): Promise<LlmHealth> {
      try {
        await access(config.model, constants.R_OK);
      } catch {
        return { status: "not_configured", detail: missingModel(config.model).message };
      }
      const target = ready();
      if (target) return { status: "healthy", detail: `${modelName} loaded, context ${target.contextSize} tokens` };
      const failure = loadFailure(key);
      if (failure) return { status: "error", detail: failure };
      try {
        const { readGgufFileInfo } = await import("node-llama-cpp");
        const info = await readGgufFileInfo(config.model, { readTensorInfo: false, sourceType: "filesystem" });
        const architecture = info.metadata?.general?.architecture ?? "unknown architecture";
        return { status: "healthy", detail: `${modelName} (${architecture}) present, loads on first use` };
      } catch (error) {
        return { status: "error", detail: `${modelName} is not a usable GGUF model: ${(error as Error).message}` };
      }
    },
  };
}
