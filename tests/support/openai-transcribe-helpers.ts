/**
 * Shared fixtures for the OpenAI-compatible transcription engine test files (openai-transcribe*.server.test.ts):
 * the key the fake server takes, a fast retry policy, the WAV the engine sends, the engine, and what the fake's
 * German transcript reads as. Not a test file itself.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";

import { startFakeOpenAiServer, type FakeOpenAiServer } from "./fake-openai-transcribe";
import { toneWav } from "./wav";

import {
  createOpenAiTranscriptionEngine,
  type OpenAiTranscriptionConfig,
} from "~/services/speech/openai-transcribe.server";
import type { RetryPolicy } from "~/services/speech/retry";
import { SpeechEngineError, type EngineResult, type SpeechRequest } from "~/services/speech/types";

export const KEY = "sk-test-0123456789abcdef";
export const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

export async function rejection(promise: Promise<unknown>): Promise<SpeechEngineError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SpeechEngineError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

export function texts(result: EngineResult) {
  return result.words.map((w) => w.text);
}

export function word(result: EngineResult, text: string) {
  const found = result.words.find((w) => w.text === text && !w.punctuation);
  if (!found) throw new Error(`no word ${text}`);
  return found;
}

/** The fake's German transcript (GERMAN_TRANSCRIPT) as the engine's words and punctuation marks. */
export const EXPECTED_TOKENS = [
  "Guten",
  "Tag",
  ".",
  "Der",
  "Patient",
  "berichtet",
  "über",
  "Kopfschmerzen",
  "seit",
  "drei",
  "Tagen",
  ".",
  "Er",
  "schreibt",
  "<script>alert(1)</script>",
  "ins",
  "Formular",
  ",",
  "sagt",
  "er",
  "?",
  "Leichtes",
  "Fieber",
  ",",
  "38,5",
  "Grad",
  "!",
];

/** One second of tone as the normalised WAV the engine uploads, in a fresh directory (remove it afterwards). */
export async function writeNormalisedWav(): Promise<{ dir: string; file: string; bytes: Buffer }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "skribent-openai-"));
  const bytes = toneWav(1);
  const file = path.join(dir, "normalised.wav");
  await writeFile(file, bytes);
  return { dir, file, bytes };
}

/** The engine pointed at the fake server at `url`, as whisper-1 with fast retries. */
export function transcriptionEngine(url: string, overrides: Partial<OpenAiTranscriptionConfig> = {}) {
  return createOpenAiTranscriptionEngine({ baseUrl: url, apiKey: KEY, model: "whisper-1", retry: FAST, ...overrides });
}

/** A German recording of 15 s at `file`, without vocabulary. */
export function speechRequest(file: string, overrides: Partial<SpeechRequest> = {}): SpeechRequest {
  return { file, language: "de", durationSeconds: 15, vocabulary: [], ...overrides };
}

/** What a transcription engine test works with: the WAV (written once per file), the fake server and the engine. */
export type OpenAiTranscribeWorld = {
  dir: string;
  file: string;
  bytes: Buffer;
  server: FakeOpenAiServer;
  /** The engine pointed at the current fake server (see transcriptionEngine). */
  engine(overrides?: Partial<OpenAiTranscriptionConfig>): ReturnType<typeof transcriptionEngine>;
  /** A request for the WAV (see speechRequest). */
  request(overrides?: Partial<SpeechRequest>): SpeechRequest;
};

/**
 * For a describe block: the WAV of writeNormalisedWav before all its tests (removed after them), and a fresh fake
 * server taking KEY before each test (closed after it).
 */
export function fakeOpenAiTranscribeForEachTest(): OpenAiTranscribeWorld {
  const world = {
    engine: (overrides: Partial<OpenAiTranscriptionConfig> = {}) => transcriptionEngine(world.server.url, overrides),
    request: (overrides: Partial<SpeechRequest> = {}) => speechRequest(world.file, overrides),
  } as OpenAiTranscribeWorld;
  beforeAll(async () => {
    Object.assign(world, await writeNormalisedWav());
  });
  afterAll(async () => {
    await rm(world.dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    world.server = await startFakeOpenAiServer({ apiKey: KEY });
  });
  afterEach(async () => {
    await world.server.close();
  });
  return world;
}
