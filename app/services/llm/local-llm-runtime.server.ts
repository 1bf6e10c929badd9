import { access, constants } from "node:fs/promises";
import path from "node:path";

import type { Llama, LlamaChat, LlamaContext, LlamaGrammar, LlamaModel } from "node-llama-cpp";

import { verificationProblem } from "../model-store/verify.server";
import { LlmError } from "./types";

export type LocalLlmConfig = {
  /** Absolute path of the GGUF file. */
  model: string;
  /** Where the lock file of pins lives (model-store/hub-pin.server.ts). */
  modelsDir?: string;
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

// The embedded language model's process-wide state (local-llm.server.ts is the engine): one llama.cpp, one
// model, one request at a time.
// - Binaries: only the prebuilt CPU binary of @node-llama-cpp/<platform> (gpu: false, build: "never",
//   skipDownload): nothing is compiled or downloaded, at install or at run time (package.json stubs out the
//   CUDA/Vulkan packages and does not allow node-llama-cpp's postinstall).
// - One model per process, loaded on first use and kept; one context with one sequence; requests run one at
//   a time in arrival order (a caller that aborts while waiting leaves the queue at once). Threads are set
//   explicitly for the context: with node-llama-cpp's default (at least 4) on a 2-core machine generation
//   crawled at 1–2 tokens/s (shared/models/README.md).

const USER_MODEL_MISSING = "letters:errors.modelMissing";

export type Loaded = {
  key: string;
  model: LlamaModel;
  context: LlamaContext;
  chat: LlamaChat;
  contextSize: number;
  grammars: Map<string, Promise<LlamaGrammar>>;
};

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
export function serialised<T>(task: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
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

export function missingModel(file: string): LlmError {
  return new LlmError(
    "not_configured",
    `The language model file ${file} does not exist. The app downloads it on start unless MODELS_AUTO_DOWNLOAD=0; ` +
      "`npm run models -- --only llm` fetches it ahead of time, or set LOCAL_LLM_MODEL.",
    { userMessageKey: USER_MODEL_MISSING },
  );
}

export async function getLlamaOnce(): Promise<Llama> {
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
  // Matching its pin before llama.cpp reads a byte (issue 21): a half-downloaded or altered file is never loaded.
  const unverified = await verificationProblem(config.model, config.modelsDir);
  if (unverified)
    throw new LlmError("not_configured", `The language model cannot be used: ${unverified}`, {
      userMessageKey: USER_MODEL_MISSING,
    });
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
export async function ensureLoaded(config: LocalLlmConfig, key: string): Promise<Loaded> {
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

/** The model loaded for `key`, if it is the one loaded now (never starts a load). */
export function loadedModel(key: string): Loaded | undefined {
  return active?.key === key ? active : undefined;
}

/** Why the last load for `key` failed, if it did. */
export function loadFailure(key: string): string | undefined {
  return lastLoadFailure?.key === key ? lastLoadFailure.message : undefined;
}
