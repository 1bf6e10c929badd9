import { getConfig } from "../config/config.server";
import { createOpenAiChatModel } from "./openai-chat.server";
import { estimateTokens } from "./tokens";
import type { LanguageModel, StructuredRequest } from "./types";

// The language model configuration chose (LLM_ENGINE): one instance per configuration object, made on first
// use, so a missing model file or URL shows as a clear error at the first letter and on /api/health, never as
// a failed start.

let current: { model: LanguageModel; source: object } | undefined;

type LocalConfig = Parameters<typeof import("./local-llm.server").createLocalLanguageModel>[0];

/**
 * The local engine's module (and node-llama-cpp's native binding) loads on first use, not with the app.
 * Until then countTokens estimates (tokens.ts) and contextTokens is the configured value.
 */
function lazyLocalModel(config: LocalConfig): LanguageModel {
  let engine: LanguageModel | undefined;
  let loading: Promise<LanguageModel> | undefined;
  const load = () =>
    (loading ??= import("./local-llm.server").then((module) => (engine = module.createLocalLanguageModel(config))));
  return {
    name: "local",
    get contextTokens() {
      return engine?.contextTokens ?? config.contextTokens;
    },
    countTokens: (text) => (engine ? engine.countTokens(text) : estimateTokens(text)),
    generateStructured: async <T = unknown>(request: StructuredRequest) =>
      (await load()).generateStructured<T>(request),
    chat: async (request) => (await load()).chat(request),
    chatStream: async (request, onText) => {
      const engine = await load();
      return engine.chatStream ? engine.chatStream(request, onText) : engine.chat(request);
    },
    check: async (timeoutMs) => {
      try {
        return await (await load()).check(timeoutMs);
      } catch (error) {
        loading = undefined;
        return { status: "error", detail: `The local engine cannot start: ${(error as Error).message}` };
      }
    },
  };
}

export function getLanguageModel(): LanguageModel {
  const config = getConfig();
  // A new configuration (tests install one per suite) gets a new instance.
  if (current?.source === config.llm) return current.model;
  const llm = config.llm;
  let model: LanguageModel;
  switch (llm.engine) {
    case "openai":
      model = createOpenAiChatModel({
        baseUrl: llm.openai.baseUrl ?? "",
        apiKey: llm.openai.apiKey,
        model: llm.openai.model,
        structuredOutput: llm.openai.structuredOutput,
        contextTokens: llm.contextTokens,
        timeoutMs: llm.timeoutMs,
      });
      break;
    case "local":
      model = lazyLocalModel({
        model: llm.local.model,
        modelsDir: llm.local.modelsDir,
        threads: llm.local.threads,
        contextTokens: llm.contextTokens,
      });
      break;
  }
  current = { model, source: llm };
  return model;
}

/** For tests: a real engine built with test settings (a fake server, short backoff), or a stand-in. */
export function setLanguageModel(model: LanguageModel | undefined) {
  current = model ? { model, source: getConfig().llm } : undefined;
}
