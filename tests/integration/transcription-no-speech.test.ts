import { describe, expect, it } from "vitest";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { setSpeechEngine } from "~/services/speech/engine.server";
import type { EngineResult, SpeechEngine } from "~/services/speech/types";
import { runTranscriptionJob, sweepTranscriptionJobs } from "~/services/transcription/job.server";
import { apiClientFor } from "../support/api-client";
import { buildJsonV2 } from "../support/fake-speechmatics";
import { call, jobOf, recordingOf, setupTranscriptionWorld, SPEECHMATICS_ENV } from "../support/transcription-world";
import { setupTestApp } from "../setup/app";

// A recording in which the engine recognises no speech (issue 22, finding 6): the same audio gives the same empty
// result however often it is sent, so the job fails at once with the reason — one engine call, attempt 1, nothing
// queued again — on the Speechmatics adapter against the protocol-faithful server and on an engine that answers like
// the embedded one. Only transient faults are retried (transcription-job.test.ts).
const app = setupTestApp({ provider: true, env: SPEECHMATICS_ENV });
const { speechmatics, engine, upload } = setupTranscriptionWorld();

/** Runs the job as the worker would, then what could run it again: a second wake-up and the sweep, a minute on. */
async function runAndTryAgain(key: string) {
  const job = await jobOf(key);
  const first = await runTranscriptionJob(job.id);
  const again = await runTranscriptionJob(job.id);
  const swept = await sweepTranscriptionJobs(new Date(Date.now() + 60 * 60_000));
  return { first, again, requeued: swept.requeued };
}

describe("no speech in the recording", () => {
  it("is final after one Speechmatics job: the reason at once, no second job", async () => {
    engine();
    speechmatics().transcript = buildJsonV2([], { language: "de" });
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    const created = speechmatics().calls("create");
    expect((await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key })).status).toBe(200);

    expect(await runAndTryAgain(key)).toEqual({ first: "failed", again: "skipped", requeued: 0 });
    expect(speechmatics().calls("create") - created).toBe(1);
    expect(await jobOf(key)).toMatchObject({
      status: "failed",
      attempts: 1,
      error_key: "transcriptions:errors.noSpeech",
    });
    expect(await recordingOf(key)).toMatchObject({ transcription_status: "failed", transcript_key: null });
  });

  it("is final after one call of an engine that hears nothing, as the embedded engine on silence", async () => {
    let calls = 0;
    const silent: SpeechEngine = {
      name: "local",
      async transcribe(request): Promise<EngineResult> {
        calls += 1;
        return { engine: "local", language: request.language, audioSeconds: request.durationSeconds, words: [] };
      },
      check: async () => ({ status: "healthy" }),
    };
    setSpeechEngine(silent);
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });

    expect(await runAndTryAgain(key)).toEqual({ first: "failed", again: "skipped", requeued: 0 });
    expect(calls).toBe(1);
    expect(await jobOf(key)).toMatchObject({
      status: "failed",
      attempts: 1,
      error_key: "transcriptions:errors.noSpeech",
    });
  });
});
