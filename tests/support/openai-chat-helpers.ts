/**
 * Shared fixtures for the OpenAI-compatible chat engine test files (openai-chat*.server.test.ts): the key the
 * fake server takes, a fast retry policy, the letter schema with a valid answer, the request and the engine.
 * Not a test file itself.
 */
import { afterEach, beforeEach } from "vitest";

import { startFakeOpenAiChatServer, type FakeChatServer } from "./fake-openai-chat";

import type { RetryPolicy } from "~/services/speech/retry";
import { createOpenAiChatModel, type OpenAiChatConfig } from "~/services/llm/openai-chat.server";
import { LlmError, type JsonSchema, type StructuredRequest } from "~/services/llm/types";

export const KEY = "sk-test-0123456789abcdef";
export const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

export const SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    document_type: { type: "string", enum: ["patient_conversation", "doctor_dictation", "other"] },
    sections: {
      type: "object",
      properties: { s1: { type: "string" }, s2: { type: "string" } },
      required: ["s1", "s2"],
      additionalProperties: false,
    },
  },
  required: ["document_type", "sections"],
  additionalProperties: false,
};
export const VALID = {
  document_type: "doctor_dictation",
  sections: { s1: "Kopfschmerzen seit drei Tagen.", s2: "Keine." },
};

export async function rejection(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

/** The engine pointed at the fake server at `url`: json_schema mode, 8k context, a 5 s time-out, fast retries. */
export function chatModel(url: string, overrides: Partial<OpenAiChatConfig> = {}) {
  return createOpenAiChatModel({
    baseUrl: url,
    apiKey: KEY,
    model: "gpt-4o-mini",
    structuredOutput: "json_schema",
    contextTokens: 8192,
    timeoutMs: 5_000,
    retry: FAST,
    ...overrides,
  });
}

export function request(overrides: Partial<StructuredRequest> = {}): StructuredRequest {
  return {
    messages: [
      { role: "system", content: "You write medical letters." },
      { role: "user", content: "Transkript: Der Patient hat Kopfschmerzen." },
    ],
    schema: SCHEMA,
    schemaName: "arztbrief",
    maxTokens: 500,
    temperature: 0,
    ...overrides,
  };
}

/** What a chat engine test works with: the fake server of the current test and the engine pointed at it. */
export type OpenAiChatWorld = {
  server: FakeChatServer;
  /** The engine pointed at the current fake server (see chatModel). */
  model(overrides?: Partial<OpenAiChatConfig>): ReturnType<typeof chatModel>;
};

/** For a describe block: a fresh fake chat server taking KEY before each test, closed after it. */
export function fakeOpenAiChatForEachTest(): OpenAiChatWorld {
  const world = {
    model: (overrides: Partial<OpenAiChatConfig> = {}) => chatModel(world.server.url, overrides),
  } as OpenAiChatWorld;
  beforeEach(async () => {
    world.server = await startFakeOpenAiChatServer({ apiKey: KEY });
  });
  afterEach(async () => {
    await world.server.close();
  });
  return world;
}
