import path from "node:path";

import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";

import { reply, startFakeOpenAiChatServer, type FakeChatServer } from "../../../tests/support/fake-openai-chat";
import { buildConfig, getConfig, parseEnv, setConfig, type Config } from "../config/config.server";
import { getLanguageModel, setLanguageModel } from "./engine.server";
import { unloadLocalLanguageModel } from "./local-llm-runtime.server";
import { estimateTokens } from "./tokens";
import type { LanguageModel } from "./types";

// Which engine the configuration picks, one instance per configuration, and the local engine loaded lazily.

const SHARED = path.resolve(process.cwd(), "../shared/models");

function config(env: Record<string, string>): Config {
  return buildConfig(
    parseEnv({
      DATA_DIR: "/tmp/skribent-llm-engine-test",
      COOKIE_SECRET: "c".repeat(32),
      STORAGE_SIGNING_SECRET: "s".repeat(32),
      ...env,
    }),
  );
}

describe("getLanguageModel", () => {
  let saved: Config;
  let server: FakeChatServer;

  beforeEach(async () => {
    saved = getConfig();
    server = await startFakeOpenAiChatServer({ apiKey: "sk-engine-test" });
  });

  afterAll(async () => {
    await unloadLocalLanguageModel();
  });

  afterEach(async () => {
    setLanguageModel(undefined);
    setConfig(saved);
    await server.close();
  });

  it("builds the OpenAI-compatible engine from LLM_* settings, once per configuration", async () => {
    setConfig(
      config({
        LLM_ENGINE: "openai",
        LLM_OPENAI_URL: `${server.url}/`,
        LLM_OPENAI_API_KEY: "sk-engine-test",
        LLM_OPENAI_MODEL: "qwen2.5:3b",
        LLM_OPENAI_STRUCTURED_OUTPUT: "json_object",
        LLM_CONTEXT_TOKENS: "4096",
      }),
    );
    const model = getLanguageModel();
    expect(getLanguageModel()).toBe(model);
    expect(model).toMatchObject({ name: "openai", contextTokens: 4096 });

    server.replies.push(reply.json({ ok: true }));
    const result = await model.generateStructured({
      messages: [{ role: "user", content: "Hallo" }],
      schema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
      schemaName: "ok",
      maxTokens: 10,
    });
    expect(result).toMatchObject({ value: { ok: true }, model: "qwen2.5:3b" });
    expect(server.chatRequests()[0]!.body.response_format).toEqual({ type: "json_object" });

    setConfig(config({ LLM_ENGINE: "openai", LLM_OPENAI_URL: server.url }));
    expect(getLanguageModel()).not.toBe(model);
  });

  it("loads the local engine only when it is first used", async () => {
    setConfig(config({ MODELS_DIR: SHARED, LOCAL_LLM_MODEL: "stories260K.gguf", LLM_CONTEXT_TOKENS: "4096" }));
    const model = getLanguageModel();
    expect(model.name).toBe("local");
    // Not loaded yet: the configured context and the estimate.
    expect(model.contextTokens).toBe(4096);
    expect(model.countTokens("Once upon a time")).toBe(estimateTokens("Once upon a time"));
    expect(await model.check()).toMatchObject({ status: "healthy" });
    const result = await model.chat({ messages: [{ role: "user", content: "Once upon a time" }], maxTokens: 4 });
    expect(result.model).toBe("stories260K.gguf");
    expect(model.contextTokens).toBe(2048);
  });

  it("says which file is missing when the local model is not installed", async () => {
    setConfig(config({ MODELS_DIR: "/tmp/skribent-no-models-here" }));
    expect(await getLanguageModel().check()).toEqual({
      status: "not_configured",
      detail:
        "The language model file /tmp/skribent-no-models-here/Ministral-3-3B-Instruct-2512-Q4_K_M.gguf does not " +
        "exist. The app downloads it on start unless MODELS_AUTO_DOWNLOAD=0; `npm run models -- --only llm` fetches " +
        "it ahead of time, or set LOCAL_LLM_MODEL.",
    });
  });

  it("lets tests install a model of their own", () => {
    const stand: LanguageModel = { ...getLanguageModel(), name: "openai" };
    setLanguageModel(stand);
    expect(getLanguageModel()).toBe(stand);
  });
});
