import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
// First: the queue handle and the job registry (which imports every job runner).
import { setJobs, type JobsHandle } from "~/services/jobs/queue.server";
import { startJobs } from "~/services/jobs/registry.server";
import { loader as filesLoader } from "~/routes/api.files";
import { action as letterAction } from "~/routes/api.medical-letter-v2";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { getDb } from "~/models/db.server";
import { LETTER_LEASE_MS, sweepLetterJobs } from "~/services/letters/job.server";
import { setLanguageModel } from "~/services/llm/engine.server";
import { createOpenAiChatModel } from "~/services/llm/openai-chat.server";
import { setSpeechEngine } from "~/services/speech/engine.server";
import { createSpeechmaticsEngine } from "~/services/speech/speechmatics.server";
import { LEASE_MS, sweepTranscriptionJobs } from "~/services/transcription/job.server";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { bundleFaultWorker, startFaultWorker, type FaultWorker } from "../support/fault-worker-process";
import { meteredUnits, seedReadyRecording, stateOf } from "../support/faults";
import { letterModel } from "../support/fake-llm-letters";
import { reply, startFakeOpenAiChatServer, type FakeChatServer } from "../support/fake-openai-chat";
import { startFakeSpeechmatics, type FakeSpeechmatics } from "../support/fake-speechmatics";
import { seedTranscribedRecording } from "../support/letter-fixtures";
import { APP_URL, callRoute, request, setupTestApp, signedInUser, TEST_CLIENT } from "../setup/app";

// A worker killed mid-job (the hardening issue's fault suite). Worker A is `npm run worker` in a process of its
// own, with Speechmatics and the language model of its configuration — local protocol-faithful servers that
// hold its call. A claims the job, reaches the engine, and is killed with SIGKILL: no result, no lease renewal,
// no cleanup. Worker B (this process's queue) takes the job over once A's lease has lapsed and the sweep hands it
// on. The lease (90 s, 120 s for letters) is not shortened: the sweep is asked at the moment it would run after
// the lapse — it takes the time it is given, and the job rows compare leases with it.
const app = setupTestApp();
let speechmatics: FakeSpeechmatics;
let llm: FakeChatServer;
let bundle: Awaited<ReturnType<typeof bundleFaultWorker>>;
let worker: FaultWorker | undefined;
let jobs: JobsHandle | undefined;
let dir: string;
let wav: string;

beforeAll(async () => {
  [speechmatics, llm, bundle, dir] = await Promise.all([
    startFakeSpeechmatics(),
    startFakeOpenAiChatServer({ responder: letterModel }),
    bundleFaultWorker(),
    makeTempDir(),
  ]);
  wav = await makeSpeechWav(dir);
});
afterEach(async () => {
  await worker?.kill();
  await queue(undefined);
});
afterAll(async () => {
  setSpeechEngine(undefined);
  setLanguageModel(undefined);
  await Promise.all([speechmatics?.close(), llm?.close()]);
  bundle?.remove();
  await removeTempDir(dir);
});

/** This process's queue: a sender only (the web side), or also a worker (B). */
async function queue(mode: "send" | "work" | undefined) {
  setJobs(undefined);
  await jobs?.stop();
  jobs = mode ? await startJobs({ pool: app.database.handle.pool, work: mode === "work", schedule: false }) : undefined;
  setJobs(jobs);
}

/** Worker A: the app's configuration as a separate worker process would have it. */
function startWorkerA() {
  const direct = app.database.handle;
  return startFaultWorker(bundle.file, {
    APP_ENV: "test",
    APP_URL,
    DATA_DIR: app.config.dataDir,
    COOKIE_SECRET: "x".repeat(40),
    STORAGE_SIGNING_SECRET: "y".repeat(40),
    OIDC_ISSUER: "http://127.0.0.1:9",
    OIDC_CLIENT_ID: TEST_CLIENT.clientId,
    OIDC_CLIENT_SECRET: TEST_CLIENT.clientSecret,
    DATABASE_URL: direct.connectionString,
    // The embedded database serves two connections: this process's one and A's.
    FAULT_WORKER_POOL_SIZE: direct.kind === "pglite" ? "1" : "2",
    SPEECH_ENGINE: "speechmatics",
    SPEECHMATICS_API_KEY: "test-key",
    SPEECHMATICS_BATCH_URL: speechmatics.url,
    LLM_ENGINE: "openai",
    LLM_OPENAI_URL: llm.url,
    LLM_CONTEXT_TOKENS: "16000",
  });
}

async function post(action: Parameters<typeof callRoute>[0], cookie: string, path: string, json: unknown) {
  const headers = { "Content-Type": "application/json", Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };
  const response = await callRoute(
    action,
    request(path, { cookie, method: "POST", headers, body: JSON.stringify(json) }),
  );
  return { status: response.status, body: await response.json() };
}

/** The recording as the list shows it (SPEC §7 /api/files). */
async function listed(cookie: string, key: string) {
  const { files } = await (await callRoute(filesLoader, request("/api/files", { cookie }))).json();
  const file = files.find((f: { key: string }) => f.key === key);
  return { transcription: file.transcriptionStatus, letter: file.metadata.medical_letter_status };
}

async function jobRow(table: "transcription_jobs" | "letter_jobs", recordingId: string) {
  return getDb()
    .selectFrom(table)
    .where("recording_id", "=", recordingId)
    .select(["id", "status", "attempts", "lease_until"])
    .executeTakeFirst();
}

const afterLapse = (leaseMs: number) => new Date(Date.now() + leaseMs + 1_000);

describe("a worker killed mid-job", () => {
  it("transcription: B takes the job over after A's lease, one transcript, metered once", async () => {
    const { user, cookie } = await signedInUser({ email: "abbruch@praxis.example" });
    const recording = await seedReadyRecording({ ownerId: user.id, wav });
    await queue("send");
    speechmatics.pollsUntilDone = 1_000_000;
    worker = await startWorkerA();
    expect((await post(transcribeAction, cookie, "/api/transcribe_v2", { s3_key: recording.key })).status).toBe(200);
    // A has the job and is waiting for Speechmatics.
    await vi.waitFor(() => expect(speechmatics.calls("create")).toBe(1), { timeout: 30_000 });
    expect(await jobRow("transcription_jobs", recording.id)).toMatchObject({ status: "running", attempts: 1 });

    expect(await worker.kill()).toBe("SIGKILL");
    expect(await listed(cookie, recording.key)).toMatchObject({ transcription: "processing" });
    // While A's lease runs nobody takes the job; once it lapsed, the sweep hands it to B.
    await queue("work");
    speechmatics.pollsUntilDone = 0;
    setSpeechEngine(
      createSpeechmaticsEngine({
        apiKey: "test-key",
        batchUrl: speechmatics.url,
        pollIntervalMs: 10,
        retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      }),
    );
    expect(await sweepTranscriptionJobs()).toMatchObject({ requeued: 0 });
    expect(await sweepTranscriptionJobs(afterLapse(LEASE_MS))).toMatchObject({ requeued: 1 });
    await vi.waitFor(
      async () => expect(await listed(cookie, recording.key)).toMatchObject({ transcription: "completed" }),
      {
        timeout: 30_000,
      },
    );

    expect(await jobRow("transcription_jobs", recording.id)).toMatchObject({ status: "completed", attempts: 2 });
    expect(await stateOf(recording.id)).toMatchObject({ transcripts: 1, transcriptionJobs: 1 });
    expect(speechmatics.calls("create")).toBe(2);
    // A never got an answer, so only B's audio seconds are metered.
    expect(await meteredUnits(user.id, "transcribe_v2")).toEqual([{ unit: "audio_second", units: expect.any(String) }]);
  });

  it("letter: B writes the letter after A's lease, one letter with one version, tokens metered once", async () => {
    const { user, cookie } = await signedInUser({ email: "brief@praxis.example" });
    const { sourceKey, recordingId } = await seedTranscribedRecording({
      ownerId: user.id,
      lines: [
        { speaker: "S1", text: "Guten Tag, was führt Sie zu mir?" },
        { speaker: "S2", text: "Seit drei Tagen habe ich Kopfschmerzen." },
      ],
    });
    await queue("send");
    // The model holds A's request (the fake answers only after ten minutes, or never once A is gone).
    llm.responder = () => reply.slow(600_000);
    worker = await startWorkerA();
    const created = await post(letterAction, cookie, "/api/medical-letter-v2", { source_key: sourceKey });
    expect(created).toMatchObject({ status: 202, body: { status: "processing" } });
    await vi.waitFor(() => expect(llm.requests.length).toBe(1), { timeout: 30_000 });
    expect(await jobRow("letter_jobs", recordingId)).toMatchObject({ status: "running", attempts: 1 });

    expect(await worker.kill()).toBe("SIGKILL");
    expect(await listed(cookie, sourceKey)).toMatchObject({ letter: "processing" });
    await queue("work");
    llm.responder = letterModel;
    setLanguageModel(
      createOpenAiChatModel({
        baseUrl: llm.url,
        model: "test-model",
        structuredOutput: "json_schema",
        contextTokens: 16_000,
        timeoutMs: 5_000,
        retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      }),
    );
    expect(await sweepLetterJobs()).toMatchObject({ requeued: 0 });
    expect(await sweepLetterJobs(afterLapse(LETTER_LEASE_MS))).toMatchObject({ requeued: 1 });
    await vi.waitFor(async () => expect(await listed(cookie, sourceKey)).toMatchObject({ letter: "completed" }), {
      timeout: 30_000,
    });

    expect(await jobRow("letter_jobs", recordingId)).toMatchObject({ status: "completed", attempts: 2 });
    expect(await stateOf(recordingId)).toMatchObject({ letters: 1, letterJobs: 1 });
    const versions = await getDb()
      .selectFrom("letter_versions")
      .innerJoin("letters", "letters.id", "letter_versions.letter_id")
      .where("letters.recording_id", "=", recordingId)
      .select("letter_versions.version")
      .execute();
    expect(versions).toEqual([{ version: 1 }]);
    const units = (await meteredUnits(user.id, "medical-letter-v2")).map((row) => row.unit).sort();
    expect(units).toEqual(["input_token", "output_token"]);
  });
});
