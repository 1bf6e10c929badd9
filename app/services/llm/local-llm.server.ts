import { access, constants } from "node:fs/promises";
import path from "node:path";

import type {
  ChatHistoryItem,
  GbnfJsonSchema,
  Llama,
  LlamaChat,
  LlamaContext,
  LlamaGrammar,
  LlamaModel,
} from "node-llama-cpp";

import { readStructuredAnswer } from "./json-schema";
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
  type TokenUsage,
} from "./types";

// The embedded language model: a GGUF file run by llama.cpp through node-llama-cpp 3.22.1, on the CPU.
// - Binaries: only the prebuilt CPU binary of @node-llama-cpp/<platform> (gpu: false, build: "never",
//   skipDownload): nothing is compiled or downloaded, at install or at run time (package.json stubs out the
//   CUDA/Vulkan packages and does not allow node-llama-cpp's postinstall).
// - One model per process, loaded on first use and kept; one context with one sequence; requests run one at
//   a time in arrival order (a caller that aborts while waiting leaves the queue at once). Threads are set
//   explicitly for the context: with node-llama-cpp's default (at least 4) on a 2-core machine generation
//   crawled at 1–2 tokens/s (shared/models/README.md).
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

export type LocalLlmConfig = {
  /** Absolute path of the GGUF file. */
  model: string;
  threads: number;
  contextTokens: number;
  /** Generations for one structured answer that fails validation (default 3). */
  structuredAttempts?: number;
  /**
   * Use `contextTokens` even beyond the model's training context (llama.cpp extrapolates RoPE; quality drops).
   * Only for models trained on very short contexts, such as the tests' stories260K (512 tokens), so that a
   * whole letter request can run on them; real letter models are trained on far more than LLM_CONTEXT_TOKENS.
   */
  extendContext?: boolean;
};

export type LocalLanguageModel = LanguageModel & {
  /** Loads the model now (normally on first use), so that countTokens and contextTokens are exact. */
  load(): Promise<void>;
};

const STRUCTURED_ATTEMPTS = 3;
const RETRY_TEMPERATURE = 0.4;
const USER_MODEL_MISSING = "letters:errors.modelMissing";
const USER_INVALID_OUTPUT = "letters:errors.structuredOutputFailed";

type Loaded = {
  key: string;
  model: LlamaModel;
  context: LlamaContext;
  chat: LlamaChat;
  contextSize: number;
  grammars: Map<string, Promise<LlamaGrammar>>;
};

// ---- Process-wide state: one llama.cpp, one model, one request at a time ---------------------------------

let llama: Promise<Llama> | undefined;
let current: { key: string; loading: Promise<Loaded> } | undefined;
/** The model of `current` once it has loaded. */
let active: Loaded | undefined;
let lastLoadFailure: { key: string; message: string } | undefined;
let tail: Promise<void> = Promise.resolve();

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Runs `task` after every task queued before it; leaving the queue early (abort) never lets two run at once. */
function serialised<T>(task: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  const previous = tail;
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  tail = previous.then(() => done);
  return (async () => {
    try {
      await abortable(previous, signal);
      return await task();
    } finally {
      release();
    }
  })();
}

function missingModel(file: string): LlmError {
  return new LlmError(
    "not_configured",
    `The language model file ${file} does not exist. Run \`npm run models -- --only llm\` or set LOCAL_LLM_MODEL.`,
    { userMessageKey: USER_MODEL_MISSING },
  );
}

async function getLlamaOnce(): Promise<Llama> {
  llama ??= import("node-llama-cpp")
    .then(({ getLlama, LlamaLogLevel }) =>
      getLlama({
        gpu: false,
        build: "never",
        skipDownload: true,
        usePrebuiltBinaries: true,
        progressLogs: false,
        // No cap of its own: each context's `threads` is then exactly what it asks for.
        maxThreads: 0,
        logLevel: LlamaLogLevel.error,
        logger: (level, message) => {
          if (level === "error" || level === "fatal") console.warn(`[llm] llama.cpp: ${message.trim()}`);
        },
      }),
    )
    .catch((error: unknown) => {
      llama = undefined;
      throw new LlmError(
        "not_configured",
        `node-llama-cpp has no usable prebuilt binary for this machine (${(error as Error).message})`,
        { userMessageKey: USER_MODEL_MISSING, cause: error },
      );
    });
  return llama;
}

async function load(config: LocalLlmConfig, key: string): Promise<Loaded> {
  try {
    await access(config.model, constants.R_OK);
  } catch {
    throw missingModel(config.model);
  }
  const instance = await getLlamaOnce();
  let model: LlamaModel;
  try {
    model = await instance.loadModel({ modelPath: config.model, gpuLayers: 0 });
  } catch (error) {
    throw new LlmError(
      "not_configured",
      `llama.cpp cannot load ${config.model} (${(error as Error).message.split("\n")[0]}). ` +
        "Fetch it again with `npm run models -- --only llm`.",
      { userMessageKey: USER_MODEL_MISSING, cause: error },
    );
  }
  try {
    const limit = config.extendContext ? config.contextTokens : Math.min(config.contextTokens, model.trainContextSize);
    const contextSize = Math.max(256, limit);
    const context = await model.createContext({ contextSize, threads: config.threads, sequences: 1 });
    const { LlamaChat } = await import("node-llama-cpp");
    const chat = new LlamaChat({ contextSequence: context.getSequence() });
    return { key, model, context, chat, contextSize: context.contextSize, grammars: new Map() };
  } catch (error) {
    await model.dispose().catch(() => {});
    throw new LlmError(
      "not_configured",
      `No context of ${config.contextTokens} tokens for ${path.basename(config.model)} ` +
        `(${(error as Error).message}). Lower LLM_CONTEXT_TOKENS or give the server more memory.`,
      { userMessageKey: USER_MODEL_MISSING, cause: error },
    );
  }
}

async function release(loaded: Loaded) {
  loaded.chat.dispose();
  await loaded.context.dispose();
  await loaded.model.dispose();
}

/** The loaded model for `key`, loading it (and releasing another) when needed. Call only inside the queue. */
async function ensureLoaded(config: LocalLlmConfig, key: string): Promise<Loaded> {
  if (current && current.key !== key) {
    const previous = current.loading;
    current = undefined;
    active = undefined;
    await previous.then(release, () => {});
  }
  if (!current) {
    const loading = load(config, key);
    current = { key, loading };
    loading.then(
      (value) => {
        if (current?.loading === loading) active = value;
        if (lastLoadFailure?.key === key) lastLoadFailure = undefined;
      },
      (error: unknown) => {
        // A failed load is not kept: the file may be put in place later.
        if (current?.loading === loading) current = undefined;
        lastLoadFailure = { key, message: (error as Error).message };
      },
    );
  }
  return current.loading;
}

/** For tests and shutdown: releases the loaded model (the llama.cpp binding stays). */
export async function unloadLocalLanguageModel(): Promise<void> {
  await serialised(async () => {
    const previous = current?.loading;
    current = undefined;
    active = undefined;
    await previous?.then(release, () => {});
  }, undefined);
}

// ---- JSON schema → grammar --------------------------------------------------------------------------------

/** The JsonSchema subset in node-llama-cpp's grammar dialect; `pattern` has no counterpart and is left out. */
export function grammarSchema(schema: JsonSchema): GbnfJsonSchema {
  const description = schema.description ? { description: schema.description } : {};
  if (schema.const !== undefined) return { const: schema.const, ...description };
  if (schema.enum !== undefined) return { enum: schema.enum, ...description };
  const type = schema.type ?? (schema.properties ? "object" : schema.items ? "array" : undefined);
  switch (type) {
    case "object":
      return {
        type: "object",
        properties: Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, grammarSchema(v)])),
        ...(schema.required ? { required: schema.required } : {}),
        // Unlisted properties are never generated (valid whether or not the schema allows them).
        additionalProperties: false,
        ...description,
      };
    case "array":
      return {
        type: "array",
        ...(schema.items ? { items: grammarSchema(schema.items) } : {}),
        ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}),
        ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems } : {}),
        ...description,
      };
    case "string":
      return {
        type: "string",
        ...(schema.minLength !== undefined ? { minLength: schema.minLength } : {}),
        ...(schema.maxLength !== undefined ? { maxLength: schema.maxLength } : {}),
        ...description,
      };
    case undefined:
      return { type: ["string", "number", "boolean", "null"], ...description };
    default:
      return { type, ...description };
  }
}

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
  const attempts = Math.max(1, config.structuredAttempts ?? STRUCTURED_ATTEMPTS);
  const modelName = path.basename(config.model);

  /** The model when this engine's model is the one loaded, else undefined (never starts a load). */
  function ready(): Loaded | undefined {
    return active?.key === key ? active : undefined;
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
        const usage: TokenUsage = { promptTokens: 0, completionTokens: 0 };
        let problem = "";
        for (let attempt = 1; attempt <= attempts; attempt++) {
          const base = request.temperature ?? 0;
          const answer = await generate(target, items, {
            maxTokens: request.maxTokens,
            temperature: attempt === 1 ? base : Math.max(base, RETRY_TEMPERATURE),
            ...(attempt > 1 ? { seed: attempt } : {}),
            grammar,
            signal: request.signal,
          });
          usage.promptTokens += prompt;
          usage.completionTokens += answer.completionTokens;
          if (answer.cutOff) {
            problem = `the answer was cut off at ${request.maxTokens} tokens`;
            continue;
          }
          const read = readStructuredAnswer(answer.text, request.schema);
          if (read.ok) return { value: read.value as T, usage, model: modelName };
          problem = read.problem;
        }
        throw new LlmError(
          "invalid_output",
          `${modelName}: no valid structured answer in ${attempts} attempts (${problem})`,
          {
            userMessageKey: USER_INVALID_OUTPUT,
          },
        );
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
      if (lastLoadFailure?.key === key) return { status: "error", detail: lastLoadFailure.message };
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
