import { copyFile, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { validateJson } from "./json-schema";
import { grammarSchema } from "./local-llm-grammar.server";
import { unloadLocalLanguageModel } from "./local-llm-runtime.server";
import { createLocalLanguageModel, type LocalLlmConfig } from "./local-llm.server";
import { estimateTokens } from "./tokens";
import { LlmError, type ChatMessage, type JsonSchema } from "./types";

// The embedded engine on the only GGUF model these machines have (../shared/models, beside the repository in
// CI): stories260K, a real 260K-parameter llama trained on children's stories. It is no instruction model, so
// what it writes is nonsense — but it runs node-llama-cpp's real loading, tokenizer, chat template and
// grammar-constrained sampling, which is what these tests are about.

const SHARED = path.resolve(process.cwd(), "../shared/models");
const STORIES = path.join(SHARED, "stories260K.gguf");
/** A real model file, but whisper.cpp's ggml format, not GGUF. */
const NOT_GGUF = path.join(SHARED, "for-tests-ggml-tiny.bin");

const MESSAGES: ChatMessage[] = [
  { role: "system", content: "You tell short stories." },
  { role: "user", content: "Tell me about a cat." },
];

function config(overrides: Partial<LocalLlmConfig> = {}): LocalLlmConfig {
  return { model: STORIES, threads: 1, contextTokens: 8192, ...overrides };
}

async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "skribent-llm-"));
});

afterAll(async () => {
  await unloadLocalLanguageModel();
  await rm(dir, { recursive: true, force: true });
});

describe("local language model (node-llama-cpp on stories260K)", () => {
  const model = createLocalLanguageModel(config());

  it("estimates before the model is loaded, and knows the configured context only", () => {
    expect(model.countTokens("Once upon a time there was a little cat.")).toBe(
      estimateTokens("Once upon a time there was a little cat."),
    );
    expect(model.contextTokens).toBe(8192);
  });

  it("reports a present model file as healthy before loading it", async () => {
    expect(await model.check()).toEqual({
      status: "healthy",
      detail: "stories260K.gguf (llama) present, loads on first use",
    });
  });

  it("answers an object with its string properties in schema order, within their bounds", async () => {
    const schema: JsonSchema = {
      type: "object",
      properties: {
        title: { type: "string", minLength: 1, maxLength: 24 },
        moral: { type: "string", maxLength: 16 },
        ending: { type: "string", maxLength: 16 },
      },
      required: ["title", "moral", "ending"],
      additionalProperties: false,
    };
    const result = await model.generateStructured<Record<string, string>>({
      messages: MESSAGES,
      schema,
      schemaName: "story",
      maxTokens: 120,
    });
    expect(Object.keys(result.value)).toEqual(["title", "moral", "ending"]);
    expect(validateJson(schema, result.value)).toEqual([]);
    expect(result.model).toBe("stories260K.gguf");
    expect(result.usage.promptTokens).toBeGreaterThan(10);
    expect(result.usage.completionTokens).toBeGreaterThan(5);
    expect(result.usage.completionTokens).toBeLessThanOrEqual(120);
  });

  it("counts exactly with the model's tokenizer once loaded, and clamps the context to the training context", () => {
    expect(model.countTokens("Once upon a time there was a little cat.")).toBe(11);
    expect(model.countTokens("Kopfschmerzen seit drei Tagen.")).toBe(22);
    // stories260K was trained with 2048 tokens of context; 8192 were configured.
    expect(model.contextTokens).toBe(2048);
  });

  it("keeps an array within minItems and maxItems", async () => {
    const schema: JsonSchema = { type: "array", items: { type: "string", maxLength: 10 }, minItems: 2, maxItems: 3 };
    const result = await model.generateStructured<string[]>({
      messages: MESSAGES,
      schema,
      schemaName: "words",
      maxTokens: 80,
    });
    expect(result.value.length).toBeGreaterThanOrEqual(2);
    expect(result.value.length).toBeLessThanOrEqual(3);
    expect(validateJson(schema, result.value)).toEqual([]);
  });

  it("picks one of an enum's values, also at temperature 1", async () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { mood: { type: "string", enum: ["fröhlich", "traurig", "müde"] }, weight: { type: "integer" } },
      required: ["mood", "weight"],
      additionalProperties: false,
    };
    for (const temperature of [0, 1]) {
      const result = await model.generateStructured<{ mood: string }>({
        messages: MESSAGES,
        schema,
        schemaName: "mood",
        maxTokens: 40,
        temperature,
      });
      expect(["fröhlich", "traurig", "müde"]).toContain(result.value.mood);
      expect(validateJson(schema, result.value)).toEqual([]);
    }
  });

  it("validates what the grammar cannot enforce (pattern) and gives up with invalid_output", async () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { code: { type: "string", maxLength: 6, pattern: "^[0-9]{3}\\.[0-9]$" } },
      required: ["code"],
      additionalProperties: false,
    };
    const error = await rejection(
      model.generateStructured({ messages: MESSAGES, schema, schemaName: "icd", maxTokens: 30 }),
    );
    expect(error.kind).toBe("invalid_output");
    expect(error.options.userMessageKey).toBe("letters:errors.structuredOutputFailed");
    expect(error.message).toContain("in 3 attempts");
    expect(error.message).toContain("does not match the pattern");
  });

  it("treats an answer cut off at maxTokens as invalid output", async () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { story: { type: "string", minLength: 40 } },
      required: ["story"],
    };
    const error = await rejection(
      model.generateStructured({ messages: MESSAGES, schema, schemaName: "story", maxTokens: 6 }),
    );
    expect(error.kind).toBe("invalid_output");
    expect(error.message).toContain("cut off at 6 tokens");
  });

  it("refuses a request that does not fit the context before generating", async () => {
    const error = await rejection(model.chat({ messages: MESSAGES, maxTokens: 2040 }));
    expect(error.kind).toBe("permanent");
    expect(error.message).toMatch(/does not fit the context window: \d+ prompt tokens \+ 2040/);
    expect(error.message).toContain("fewer than LLM_CONTEXT_TOKENS=8192");
  });

  it("chats in plain text within maxTokens", async () => {
    const result = await model.chat({ messages: MESSAGES, maxTokens: 12 });
    expect(result.content.length).toBeGreaterThan(0);
    expect(result.usage.completionTokens).toBeLessThanOrEqual(12);
    expect(result.usage.promptTokens).toBeGreaterThan(10);
  });

  it("runs concurrent requests one after the other, and lets a waiting caller abort at once", async () => {
    const request = { messages: MESSAGES, maxTokens: 16 };
    const first = model.chat(request);
    const cancelled = model.chat({ ...request, signal: AbortSignal.abort(new Error("job cancelled")) });
    const third = model.chat(request);
    await expect(cancelled).rejects.toThrow("job cancelled");
    const [a, c] = await Promise.all([first, third]);
    // Same prompt, temperature 0, one sequence used in turn: the same answer.
    expect(c.content).toBe(a.content);
  });

  it("is healthy once loaded", async () => {
    expect(await model.check()).toEqual({ status: "healthy", detail: "stories260K.gguf loaded, context 2048 tokens" });
  });

  it("keeps one model per process: another file replaces the loaded one", async () => {
    const copy = path.join(dir, "other-copy.gguf");
    await copyFile(STORIES, copy);
    const other = createLocalLanguageModel(config({ model: copy }));
    await other.load();
    expect(other.countTokens("Once upon a time there was a little cat.")).toBe(11);
    // The first engine's model is gone: it estimates again until it is used.
    expect(model.countTokens("Once upon a time there was a little cat.")).toBe(
      estimateTokens("Once upon a time there was a little cat."),
    );
    expect((await model.chat({ messages: MESSAGES, maxTokens: 4 })).model).toBe("stories260K.gguf");
  });

  it("says which file is missing and how to fetch it", async () => {
    const missing = createLocalLanguageModel(config({ model: path.join(dir, "qwen2.5-3b-instruct-q4_k_m.gguf") }));
    const error = await rejection(missing.chat({ messages: MESSAGES, maxTokens: 4 }));
    expect(error.kind).toBe("not_configured");
    expect(error.options.userMessageKey).toBe("letters:errors.modelMissing");
    expect(error.message).toContain(path.join(dir, "qwen2.5-3b-instruct-q4_k_m.gguf"));
    expect(error.message).toContain("npm run models -- --only llm");
    expect(await missing.check()).toMatchObject({ status: "not_configured" });
  });

  it("reports a file that is not a GGUF model as not configured, and check() says so", async () => {
    const wrong = createLocalLanguageModel(config({ model: NOT_GGUF }));
    expect(await wrong.check()).toMatchObject({
      status: "error",
      detail: expect.stringContaining("for-tests-ggml-tiny.bin is not a usable GGUF model"),
    });
    const error = await rejection(wrong.chat({ messages: MESSAGES, maxTokens: 4 }));
    expect(error.kind).toBe("not_configured");
    expect(error.message).toContain("cannot load");
    expect(await wrong.check()).toMatchObject({ status: "error", detail: expect.stringContaining("cannot load") });
  });
});

describe("grammarSchema", () => {
  it("keeps what llama.cpp grammars enforce and leaves out pattern", () => {
    expect(
      grammarSchema({
        type: "object",
        description: "A letter",
        properties: {
          a: { type: "string", maxLength: 5, pattern: "^x" },
          b: { type: "array", items: { enum: ["x", "y"] }, minItems: 1 },
          c: { const: "v1" },
        },
        required: ["a", "b", "c"],
      }),
    ).toEqual({
      type: "object",
      description: "A letter",
      properties: {
        a: { type: "string", maxLength: 5 },
        b: { type: "array", items: { enum: ["x", "y"] }, minItems: 1 },
        c: { const: "v1" },
      },
      required: ["a", "b", "c"],
      additionalProperties: false,
    });
  });
});
