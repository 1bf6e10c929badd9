/**
 * Shared fixtures for the Speechmatics batch engine test files (speechmatics*.server.test.ts): the key the fake
 * takes, a fast retry policy, the recording the engine uploads, and the engine. Not a test file itself.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";

import { startFakeSpeechmatics, type FakeSpeechmatics } from "./fake-speechmatics";
import { noiseWav } from "./wav";

import type { RetryPolicy } from "~/services/speech/retry";
import { createSpeechmaticsEngine, type SpeechmaticsConfig } from "~/services/speech/speechmatics.server";
import { SpeechEngineError, type SpeechRequest } from "~/services/speech/types";

export const KEY = "test-key";
export const RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
export const SECONDS = 20;

export async function failure(promise: Promise<unknown>): Promise<SpeechEngineError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SpeechEngineError);
  return error as SpeechEngineError;
}

/** SECONDS of noise as the WAV the engine uploads, in a fresh directory (remove it afterwards). */
export async function writeSpeechFile(): Promise<{ dir: string; file: string; audio: Buffer }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "skribent-speechmatics-"));
  const audio = noiseWav(SECONDS);
  const file = path.join(dir, "speech.wav");
  await writeFile(file, audio);
  return { dir, file, audio };
}

/** The engine pointed at the fake at `url`: polling every 5 ms, 2 s per call, fast retries. */
export function speechmaticsEngine(url: string, overrides: Partial<SpeechmaticsConfig> = {}) {
  return createSpeechmaticsEngine({
    apiKey: KEY,
    batchUrl: url,
    pollIntervalMs: 5,
    requestTimeoutMs: 2_000,
    retry: RETRY,
    ...overrides,
  });
}

/** A German recording of SECONDS at `file`, without vocabulary. */
export function speechRequest(file: string, overrides: Partial<SpeechRequest> = {}): SpeechRequest {
  return { file, language: "de", durationSeconds: SECONDS, vocabulary: [], ...overrides };
}

/** What a batch engine test works with: the recording (written once per file), the fake and the engine. */
export type SpeechmaticsWorld = {
  dir: string;
  file: string;
  audio: Buffer;
  server: FakeSpeechmatics;
  /** The engine pointed at the current fake (see speechmaticsEngine). */
  engine(overrides?: Partial<SpeechmaticsConfig>): ReturnType<typeof speechmaticsEngine>;
  /** A request for the recording (see speechRequest). */
  request(overrides?: Partial<SpeechRequest>): SpeechRequest;
};

/**
 * For a describe block: the recording of writeSpeechFile before all its tests (removed after them), and a fresh
 * fake Speechmatics taking KEY before each test (closed after it).
 */
export function fakeSpeechmaticsForEachTest(): SpeechmaticsWorld {
  const world = {
    engine: (overrides: Partial<SpeechmaticsConfig> = {}) => speechmaticsEngine(world.server.url, overrides),
    request: (overrides: Partial<SpeechRequest> = {}) => speechRequest(world.file, overrides),
  } as SpeechmaticsWorld;
  beforeAll(async () => {
    Object.assign(world, await writeSpeechFile());
  });
  afterAll(async () => {
    await rm(world.dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    world.server = await startFakeSpeechmatics({ apiKeys: [KEY] });
  });
  afterEach(async () => {
    await world.server.close();
  });
  return world;
}
