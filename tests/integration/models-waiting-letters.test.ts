import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action as createAction } from "~/routes/api.medical-letter-v2";
import { getConfig } from "~/services/config/config.server";
import { runLetterJob } from "~/services/letters/job.server";
import {
  LETTER_ROLES,
  modelStatus,
  startModelDownloads,
  stopModelDownloads,
  waitingForModels,
} from "~/services/model-store/downloads.server";
import { letterJobOf, seedTranscribedRecording } from "../support/letter-fixtures";
import { call, CONSULTATION, signInWith } from "../support/letters-api";
import { startModelMirror, type ModelMirror } from "../support/model-mirror";
import { setupTestApp } from "../setup/app";

// Issue 21 for letters: a letter asked for while the local letter model is still downloading waits for it, queued
// and unclaimed (no attempt used up), and is written by that model once it has arrived and been verified. The
// mirror serves ../shared/models/stories260K.gguf (a real GGUF, not instruction-tuned) under its catalogue name.
const SHARED = path.resolve("../shared/models");
const app = setupTestApp({
  provider: true,
  env: {
    SPEECH_ENGINE: "speechmatics",
    SPEECHMATICS_API_KEY: "test-key",
    LLM_ENGINE: "local",
    LOCAL_LLM_MODEL: "stories260K.gguf",
    LLM_CONTEXT_TOKENS: "4096",
  },
});
const signIn = signInWith(app);
let mirror: ModelMirror;

beforeAll(async () => {
  mirror = await startModelMirror();
  mirror.serve("stories260K.gguf", path.join(SHARED, "stories260K.gguf"));
});
afterAll(async () => {
  await stopModelDownloads();
  await mirror.close();
});

describe("a letter asked for while the letter model downloads", () => {
  it(
    "waits without using an attempt, then is taken up by the model once it is there",
    { timeout: 120_000 },
    async () => {
      mirror.hold();
      void startModelDownloads(
        { ...getConfig().models, mirrorUrl: mirror.url },
        { retryMs: 50, maxRetryMs: 200, log: () => {} },
      );
      await expect.poll(() => modelStatus().problem?.error ?? "", { timeout: 30_000 }).toContain("503");

      const { client, userId } = await signIn("anna-berger");
      const { recordingId, sourceKey } = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION });
      const created = await call(createAction, client, "/api/medical-letter-v2", {
        source_key: sourceKey,
        original_filename: "Sprechstunde.wav",
        transcript_data: "ignored",
      });
      expect(created.status).toBe(202);
      const job = (await letterJobOf(recordingId))!;
      expect(await runLetterJob(job.id)).toBe("waiting");
      expect(await letterJobOf(recordingId)).toMatchObject({ status: "queued", attempts: 0 });

      mirror.heal();
      await expect.poll(() => waitingForModels(LETTER_ROLES), { timeout: 30_000 }).toBeUndefined();
      // The model is there and verified: the job is claimed and run by it (stories260K writes no usable letter, so
      // how it ends is not the point — that it no longer waits, and used its first attempt, is).
      expect(await runLetterJob(job.id)).not.toBe("waiting");
      expect((await letterJobOf(recordingId))?.attempts).toBe(1);
    },
  );
});
