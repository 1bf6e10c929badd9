import fs from "node:fs";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { action as storagePut } from "~/routes/resources.storage.$";
import { getDb } from "~/models/db.server";
import { setSpeechEngine } from "~/services/speech/engine.server";
import { createSpeechmaticsEngine } from "~/services/speech/speechmatics.server";
import { callRoute } from "../setup/app";
import { type ApiClient } from "./api-client";
import { makeSpeechWav, makeTempDir, removeTempDir } from "./audio-fixtures";
import { startFakeSpeechmatics, TWO_SPEAKER_FIXTURE, type FakeSpeechmatics } from "./fake-speechmatics";

// The transcription job's test world (transcription-*.test.ts): a protocol-faithful Speechmatics server over HTTP
// with the real adapter in front of it, German speech to upload as the browser does, and the JSON calls and rows
// the tests look at.

/** The app's configuration for the Speechmatics engine (setupTestApp's env). */
export const SPEECHMATICS_ENV = { SPEECH_ENGINE: "speechmatics", SPEECHMATICS_API_KEY: "test-key" };

/**
 * The fake Speechmatics server and a speech recording for one test file; the server's faults and transcript are
 * reset after each test. speechmatics() is the server, engine() puts the real adapter in front of it, upload()
 * stores the recording for a client.
 */
export function setupTranscriptionWorld() {
  let speechmatics: FakeSpeechmatics;
  let dir: string;
  let wav: string;

  beforeAll(async () => {
    speechmatics = await startFakeSpeechmatics();
    dir = await makeTempDir();
    wav = await makeSpeechWav(dir);
  });
  afterAll(async () => {
    setSpeechEngine(undefined);
    await speechmatics.close();
    await removeTempDir(dir);
  });
  afterEach(() => {
    speechmatics.failures = null;
    speechmatics.garbage = null;
    speechmatics.transcript = TWO_SPEAKER_FIXTURE;
  });

  function engine() {
    // The real adapter, with a short backoff so the fault tests take milliseconds.
    setSpeechEngine(
      createSpeechmaticsEngine({
        apiKey: "test-key",
        batchUrl: speechmatics.url,
        pollIntervalMs: 10,
        retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      }),
    );
  }

  /** Upload as the browser does: slot, PUT through the storage route, metadata (unless `confirm` is false). */
  async function upload(client: ApiClient, { confirm = true }: { confirm?: boolean } = {}) {
    const slot = await call(uploadUrlAction, client, "/api/get-upload-url", {
      file_name: "Sprechstunde.wav",
      file_type: "audio/wav",
      language_code: "de",
    });
    const url = new URL(slot.body.url);
    const put = await callRoute(
      storagePut,
      new Request(url, { method: "PUT", headers: { "Content-Type": "audio/wav" }, body: fs.readFileSync(wav) }),
      { "*": url.pathname.replace(/^\/resources\/storage\//, "") },
    );
    expect(put.status).toBe(200);
    if (!confirm) return slot.body.key as string;
    const confirmed = await call(metadataAction, client, "/api/update-file-metadata", {
      s3_key: slot.body.key,
      metadata: {},
    });
    expect(confirmed.status).toBe(200);
    return slot.body.key as string;
  }

  return { speechmatics: () => speechmatics, engine, upload };
}

export async function call(route: Parameters<typeof callRoute>[0], client: ApiClient, path: string, json?: unknown) {
  const response = await callRoute(route, client(path, json === undefined ? {} : { method: "POST", json }));
  return { status: response.status, body: await response.json() };
}

export async function callGet(
  route: Parameters<typeof callRoute>[0],
  client: ApiClient,
  path: string,
  params: Record<string, string>,
) {
  const response = await callRoute(route, client(path), params);
  return { status: response.status, body: await response.json() };
}

export async function jobOf(key: string) {
  return getDb()
    .selectFrom("transcription_jobs")
    .innerJoin("recordings", "recordings.id", "transcription_jobs.recording_id")
    .where("recordings.storage_key", "=", key)
    .select([
      "transcription_jobs.id",
      "transcription_jobs.status",
      "transcription_jobs.attempts",
      "transcription_jobs.error_key",
    ])
    .executeTakeFirstOrThrow();
}

export async function recordingOf(key: string) {
  return getDb()
    .selectFrom("recordings")
    .where("storage_key", "=", key)
    .select(["id", "transcription_status", "transcript_key"])
    .executeTakeFirstOrThrow();
}
