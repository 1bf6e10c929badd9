/**
 * Shared fixtures for the Speechmatics realtime test files (live/engines/speechmatics-rt, live/speechmatics-token):
 * the fake for each test and the engine's refusals. Not a test file itself.
 */
import { afterEach, beforeEach, expect } from "vitest";

import { startFakeSpeechmaticsRt, type FakeSpeechmaticsRt } from "./fake-speechmatics-rt";

import { LiveEngineError } from "~/services/live/engine-types";

/** The LiveEngineError `promise` rejects with (fails the test on anything else). */
export async function rejection(promise: Promise<unknown>): Promise<LiveEngineError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LiveEngineError);
  return error as LiveEngineError;
}

/** For a describe block: a fresh fake Speechmatics realtime server before each test, closed after it. */
export function fakeSpeechmaticsRtForEachTest(): { server: FakeSpeechmaticsRt } {
  const world = {} as { server: FakeSpeechmaticsRt };
  beforeEach(async () => {
    world.server = await startFakeSpeechmaticsRt();
  });
  afterEach(async () => {
    await world.server.close();
  });
  return world;
}
