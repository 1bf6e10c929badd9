import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NumberedMessage } from "~/live/protocol";
import { action as createAction } from "~/routes/live.sessions";
import { action as sessionAction, loader as sessionLoader } from "~/routes/live.sessions.$";
import { getConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { stopBus } from "~/services/live/bus.server";
import { closeAllRuns } from "~/services/live/runner.server";
import {
  modelStatus,
  SPEECH_ROLES,
  startModelDownloads,
  stopModelDownloads,
  waitingForModels,
} from "~/services/model-store/downloads.server";
import { setSpeechEngine } from "~/services/speech/engine.server";
import type { SpeechRequest } from "~/services/speech/types";
import { getStorage } from "~/services/storage/storage.server";
import { runTranscriptionJob } from "~/services/transcription/job.server";
import { makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { speechBuffers } from "../support/live-client";
import { narrowPathToNode } from "../support/node-only-path";
import { startModelMirror, type ModelMirror } from "../support/model-mirror";
import { readEvents } from "../support/live-client";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Issue 21, "live recordings made meanwhile are kept": a clinician who records live while the embedded engine's
// models are still downloading is told so at once, records as usual, and saves. The recording is kept — on a
// machine without ffmpeg, as a WAV the server writes itself — and queued like an upload: its transcription job
// waits for the model and then hears the whole recording, without anyone asking again. A dictation, whose text
// is wanted now, is refused with the reason. The live engine is the real embedded one (its models are what is
// missing); once they are there the batch engine is a stand-in that reports what audio it was given, since the
// tests' whisper model has no weights and hears nothing.
const SHARED = path.resolve("../shared/models");
setupTestApp({
  env: {
    SPEECH_ENGINE: "local",
    LOCAL_RECOGNISER: "whisper",
    LOCAL_WHISPER_MODEL: "for-tests-ggml-tiny.bin",
    LOCAL_VAD_MODEL: "silero_vad.onnx",
    LOCAL_SEGMENTATION_MODEL: "none",
    LLM_ENGINE: "openai",
    LLM_OPENAI_URL: "http://127.0.0.1:9/v1",
  },
});
let mirror: ModelMirror;
let dir: string;
let speech: Buffer[];
let restorePath = () => {};
const heard: Array<{ bytes: number; seconds: number }> = [];

const START = {
  message: "StartRecognition",
  audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
  transcription_config: { language: "de" },
};

beforeAll(async () => {
  dir = await makeTempDir("skribent-live-waiting-");
  speech = await speechBuffers(dir, ["Guten Tag, was führt Sie zu mir?", "Ich habe seit drei Tagen Kopfschmerzen."]);
  mirror = await startModelMirror();
  mirror.serve("silero_vad.onnx", path.join(SHARED, "silero_vad.onnx"));
  mirror.serve("for-tests-ggml-tiny.bin", path.join(SHARED, "for-tests-ggml-tiny.bin"));
  // No ffmpeg to encode the server's copy.
  restorePath = narrowPathToNode(dir);
}, 60_000);
afterAll(async () => {
  restorePath();
  setSpeechEngine(undefined);
  await closeAllRuns();
  await stopBus();
  await stopModelDownloads();
  await mirror.close();
  await removeTempDir(dir);
});

async function newSession(cookie: string, kind: "recording" | "dictation") {
  const response = await callRoute(
    createAction,
    request("/live/sessions", {
      method: "POST",
      cookie,
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin" },
      body: JSON.stringify({ kind, language: "de" }),
    }),
  );
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

function post(cookie: string, route: string, body: unknown, type = "application/json") {
  return callRoute(
    sessionAction,
    request(`/live/sessions/${route}`, {
      method: "POST",
      cookie,
      headers: { "Content-Type": type, "Sec-Fetch-Site": "same-origin" },
      body: type === "application/json" ? JSON.stringify(body) : new Uint8Array(body as Buffer),
    }),
    { "*": route.split("?")[0] },
  );
}

function get(cookie: string, route: string, headers: Record<string, string> = {}) {
  return callRoute(sessionLoader, request(`/live/sessions/${route}`, { cookie, headers }), { "*": route });
}

describe("a live recording made while the speech model downloads", () => {
  it(
    "is kept, said to be transcribed later, saved without ffmpeg, and transcribed whole once the model is there",
    { timeout: 120_000 },
    async () => {
      mirror.fault("for-tests-ggml-tiny.bin", { kind: "status", status: 503, times: 1_000_000 });
      void startModelDownloads(
        { ...getConfig().models, mirrorUrl: mirror.url },
        { retryMs: 50, maxRetryMs: 200, log: () => {} },
      );
      await expect.poll(() => modelStatus().problem?.error ?? "", { timeout: 30_000 }).toContain("503");
      const { cookie, user } = await signedInUser({ email: "live-wartet@praxis.example" });

      // A dictation cannot wait for its text: refused, with the reason and a type the client translates.
      const dictation = await newSession(cookie, "dictation");
      const refused = await post(cookie, `${dictation}/start`, START);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({
        type: "models_loading",
        detail: expect.stringMatching(/still downloading \(\d+ %\)/),
      });

      // A recording starts as usual, and the first thing it hears is that it will be transcribed later.
      const id = await newSession(cookie, "recording");
      const started = await post(cookie, `${id}/start`, START);
      expect(await started.json()).toMatchObject({ message: "RecognitionStarted", last_seq_no: 0 });
      const added = await post(cookie, `${id}/audio?seq=1`, Buffer.concat(speech), "application/octet-stream");
      expect(await added.json()).toEqual({ message: "AudioAdded", seq_no: speech.length });
      expect((await post(cookie, `${id}/end`, { message: "EndOfStream", last_seq_no: speech.length })).status).toBe(
        202,
      );
      const messages: NumberedMessage[] = await readEvents(
        await get(cookie, `${id}/events`, { "Last-Event-ID": "0" }),
        (m) => m.message === "EndOfTranscript",
      );
      expect(messages.filter((m) => m.message !== "EndOfTranscript")).toEqual([
        expect.objectContaining({ message: "Warning", type: "transcribe_later" }),
      ]);
      // After a stop (or a reload) the page learns the session may be saved without text.
      expect(await (await get(cookie, id)).json()).toMatchObject({ transcribe_later: true, transcript: [] });

      const saved = await post(cookie, `${id}/save`, { transcription_mode: "transcript", audio_copy: false });
      const body = await saved.json();
      expect(saved.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ transcript_key: null, recording_key: expect.stringMatching(/\.wav$/) });
      // The same save again (a client that did not hear the answer) finds the first: one recording.
      const again = await post(cookie, `${id}/save`, { transcription_mode: "transcript", audio_copy: false });
      expect(again.status).toBe(409);

      const recording = await getDb()
        .selectFrom("recordings")
        .where("owner_id", "=", user.id)
        .select(["id", "storage_key", "upload_status", "transcription_status", "audio_format", "duration_seconds"])
        .execute();
      const streamedSeconds = speech.reduce((sum, b) => sum + b.length, 0) / 32_000;
      expect(recording).toEqual([
        expect.objectContaining({
          storage_key: body.recording_key,
          upload_status: "ready",
          transcription_status: "processing",
          audio_format: "wav",
        }),
      ]);
      expect(Number(recording[0]!.duration_seconds)).toBeCloseTo(streamedSeconds, 1);
      const stored = await getStorage().head(body.recording_key);
      expect(stored?.size).toBe(44 + streamedSeconds * 32_000);

      // The worker waits for the model, using no attempt.
      const job = await getDb()
        .selectFrom("transcription_jobs")
        .where("recording_id", "=", recording[0]!.id)
        .select(["id"])
        .executeTakeFirstOrThrow();
      expect(await runTranscriptionJob(job.id)).toBe("waiting");

      // The model arrives; the job goes on by itself and the engine hears the whole recording.
      setSpeechEngine({
        name: "local",
        async transcribe(req: SpeechRequest) {
          heard.push({ bytes: fs.statSync(req.file).size - 44, seconds: req.durationSeconds });
          const words = [{ text: "Kopfschmerzen", start: 3, end: 3.6, confidence: 0.9, speaker: "S1" }];
          return { engine: "local", language: req.language, audioSeconds: req.durationSeconds, words };
        },
        async check() {
          return { status: "healthy" };
        },
      });
      mirror.heal();
      await expect.poll(() => waitingForModels(SPEECH_ROLES), { timeout: 30_000 }).toBeUndefined();
      expect(await runTranscriptionJob(job.id)).toBe("completed");
      expect(heard).toEqual([{ bytes: streamedSeconds * 32_000, seconds: streamedSeconds }]);
      const done = await getDb()
        .selectFrom("recordings")
        .where("id", "=", recording[0]!.id)
        .select(["transcription_status", "transcript_key"])
        .executeTakeFirstOrThrow();
      expect(done).toMatchObject({ transcription_status: "completed", transcript_key: expect.any(String) });
    },
  );
});
