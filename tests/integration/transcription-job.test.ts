import { describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as deleteTranscriptAction } from "~/routes/api.delete-transcript";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { loader as statusLoader } from "~/routes/api.transcribe_v2_.$job.status";
import { loader as transcriptLoader } from "~/routes/api.transcript_v2.$";
import { transcriptionJobLease } from "~/models/transcription.server";
import { getDb } from "~/models/db.server";
import { getStorage } from "~/services/storage/storage.server";
import { LEASE_MS, runTranscriptionJob, sweepTranscriptionJobs } from "~/services/transcription/job.server";
import { buildJsonV2 } from "../support/fake-speechmatics";
import { apiClientFor } from "../support/api-client";
import {
  call,
  callGet,
  jobOf,
  recordingOf,
  setupTranscriptionWorld,
  SPEECHMATICS_ENV,
} from "../support/transcription-world";
import { callRoute, setupTestApp } from "../setup/app";

// The transcription job end to end on the app's side (issue 5): the JSON API as a client sees it, the job run against a
// protocol-faithful Speechmatics server over HTTP (tests/support/transcription-world.ts), and the faults — engine down,
// garbage, a worker that dies mid-job, duplicate requests — ending in exactly one transcript and no status stuck in
// "processing". What tags, reset and delete leave behind: transcription-cleanup.test.ts.
const app = setupTestApp({ provider: true, env: SPEECHMATICS_ENV });
const { speechmatics, engine, upload } = setupTranscriptionWorld();

describe("transcription (JSON API and job)", () => {
  it("starts once however often it is asked, runs the engine once, and serves the transcript", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    // Two tabs asking at the same moment, then a double click or a client retry: one job, no second run.
    const [first, ...tabs] = await Promise.all([
      call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key, metadata: { tags: ["Kardio"] } }),
      call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key }),
      call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key }),
    ]);
    expect(first.status).toBe(200);
    expect(first.body.job_name).toMatch(/^transcribe-[0-9a-f-]{36}$/);
    const again = await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    expect([...tabs, again].map((a) => a.body.job_name)).toEqual(Array(3).fill(first.body.job_name));
    expect((await recordingOf(key)).transcription_status).toBe("processing");

    const job = await jobOf(key);
    const [a, b] = await Promise.all([runTranscriptionJob(job.id), runTranscriptionJob(job.id)]);
    expect([a, b].sort()).toEqual(["completed", "skipped"]);
    expect(speechmatics().calls("create")).toBe(1);
    const sent = speechmatics().jobs.at(-1)!;
    expect(sent.config).toMatchObject({
      type: "transcription",
      transcription_config: { language: "de", operating_point: "enhanced", diarization: "speaker" },
    });
    expect(
      (sent.config.transcription_config as { additional_vocab: unknown[] }).additional_vocab.length,
    ).toBeGreaterThan(200);

    const status = await callGet(statusLoader, anna, `/api/transcribe_v2/${first.body.job_name}/status`, {
      job: first.body.job_name,
    });
    expect(status.body).toMatchObject({ job_name: first.body.job_name, status: "completed", s3_key: key });
    const transcriptKey = status.body.transcript_key as string;
    expect(transcriptKey).toMatch(/^transcripts\/[0-9a-f-]{36}\/\d{8}-\d{6}-[0-9a-f-]+\.json$/);
    // After completion a retry still answers the same job and starts nothing.
    expect((await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key })).body.job_name).toBe(
      first.body.job_name,
    );
    expect(speechmatics().calls("create")).toBe(1);

    const short = transcriptKey.replace(/^transcripts\//, "");
    const transcript = await callGet(transcriptLoader, anna, `/api/transcript_v2/${short}`, { "*": short });
    expect(transcript.status).toBe(200);
    expect(transcript.body).toMatchObject({ transcript_key: transcriptKey, source_key: key, language_code: "de" });
    expect(Object.keys(transcript.body.speakers_info)).toEqual(["S1", "S2"]);
    expect(transcript.body.speakers_info.S1).toMatchObject({ total_segments: 4, first_appearance: expect.any(Number) });
    expect(transcript.body.raw_transcript).toContain("Guten Morgen, Frau Becker.");
    expect(transcript.body.formatted_transcript.startsWith("Sprecher 1:\nGuten Morgen, Frau Becker.")).toBe(true);
    const levels = new Set(transcript.body.words.map((w: { confidence_level: string }) => w.confidence_level));
    expect([...levels].sort()).toEqual(["high", "low", "medium"]);
    // The spoken script tag: text in the text fields, inert markup in the highlighted one.
    expect(transcript.body.raw_transcript).toContain("<script>alert(1)</script>");
    expect(transcript.body.highlighted_transcript).not.toContain("<script>");
    expect(transcript.body.highlighted_transcript).toContain("&lt;script&gt;");
    expect(transcript.body.tags).toEqual(["Kardio"]);
    const reads = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "transcript.read")
      .where("entity_id", "=", transcriptKey)
      .select("id")
      .execute();
    expect(reads).toHaveLength(1);

    // Usage: the audio seconds the engine processed, under the SPEC §7 call name.
    const usage = await getDb()
      .selectFrom("usage_events")
      .where("endpoint", "=", "transcribe_v2")
      .where("unit", "!=", "call")
      .select(["unit", "units"])
      .execute();
    expect(usage).toHaveLength(1);
    expect(usage[0]!.unit).toBe("audio_second");
    expect(Number(usage[0]!.units)).toBeGreaterThan(1);

    const { files } = await (await callRoute(filesLoader, anna("/api/files"))).json();
    expect(files.find((f: { key: string }) => f.key === key)).toMatchObject({
      transcriptionStatus: "completed",
      metadata: { transcript_key: transcriptKey },
    });
  });

  it("answers SPEC's messages for a missing job name, and 404 for another user's recording, job and transcript", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const jonas = await apiClientFor(app.issuer, "jonas-keller");
    const key = await upload(anna);
    const { job_name } = (await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key })).body;
    await runTranscriptionJob((await jobOf(key)).id);
    const transcriptKey = (await recordingOf(key)).transcript_key!;

    expect(await callGet(statusLoader, anna, "/api/transcribe_v2/%20/status", { job: " " })).toEqual({
      status: 400,
      body: { detail: "Job name is required for status check" },
    });
    expect((await call(transcribeAction, jonas, "/api/transcribe_v2", { s3_key: key })).status).toBe(404);
    expect(
      (await callGet(statusLoader, jonas, `/api/transcribe_v2/${job_name}/status`, { job: job_name })).status,
    ).toBe(404);
    expect(
      (await callGet(transcriptLoader, jonas, `/api/transcript_v2/${transcriptKey}`, { "*": transcriptKey })).status,
    ).toBe(404);
    expect(
      (await call(deleteTranscriptAction, jonas, "/api/delete-transcript", { transcript_key: transcriptKey })).status,
    ).toBe(404);
    expect(await getStorage().head(transcriptKey)).not.toBeNull();
  });

  it("engine down: retried within a run, then across runs, then failed with a reason — never stuck", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    const job = await jobOf(key);
    speechmatics().failures = { status: 503, count: 1000, on: "create" };
    expect(await runTranscriptionJob(job.id)).toBe("retry");
    expect((await recordingOf(key)).transcription_status).toBe("processing");
    expect(await runTranscriptionJob(job.id)).toBe("retry");
    expect(await runTranscriptionJob(job.id)).toBe("failed");
    expect(await jobOf(key)).toMatchObject({
      status: "failed",
      attempts: 3,
      error_key: "transcriptions:errors.failed",
    });
    expect((await recordingOf(key)).transcription_status).toBe("failed");
    // Three runs of three attempts each reached the engine; nothing more.
    expect(speechmatics().calls("create")).toBeGreaterThanOrEqual(9);

    // Once the engine is back, transcribing again works.
    speechmatics().failures = null;
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    expect(await runTranscriptionJob((await jobOf(key)).id)).toBe("completed");
    expect((await recordingOf(key)).transcription_status).toBe("completed");
  });

  it("engine garbage and an empty result fail with a clear reason and store nothing", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    speechmatics().garbage = "shape";
    for (let run = 0; run < 3; run++) await runTranscriptionJob((await jobOf(key)).id);
    expect((await recordingOf(key)).transcription_status).toBe("failed");

    speechmatics().garbage = null;
    speechmatics().transcript = buildJsonV2([], { language: "de" });
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    expect(await runTranscriptionJob((await jobOf(key)).id)).toBe("failed");
    expect(await jobOf(key)).toMatchObject({ status: "failed", error_key: "transcriptions:errors.noSpeech" });
    expect(await recordingOf(key)).toMatchObject({ transcription_status: "failed", transcript_key: null });
    expect(
      await getDb()
        .selectFrom("transcripts")
        .where("recording_id", "=", (await recordingOf(key)).id)
        .select("id")
        .execute(),
    ).toEqual([]);
  });

  it("a worker killed mid-job: its lease lapses, the sweep queues the job again, one transcript results", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    const job = await jobOf(key);
    // A worker claims the job and dies: no renewals, no result.
    expect(await transcriptionJobLease.claim(job.id, LEASE_MS)).toBeTruthy();
    // While its lease runs, nobody else takes the job.
    expect(await runTranscriptionJob(job.id)).toBe("skipped");
    expect(await sweepTranscriptionJobs(new Date())).toMatchObject({ requeued: 0 });
    // The lease lapses; the sweep (every minute) queues it again and the next worker finishes it.
    const later = new Date(Date.now() + LEASE_MS + 1_000);
    expect(await sweepTranscriptionJobs(later)).toMatchObject({ requeued: 1 });
    expect(await runTranscriptionJob(job.id)).toBe("completed");
    expect(await jobOf(key)).toMatchObject({ status: "completed", attempts: 2 });
    const recording = await recordingOf(key);
    expect(recording.transcription_status).toBe("completed");
    expect(
      await getDb().selectFrom("transcripts").where("recording_id", "=", recording.id).select("id").execute(),
    ).toHaveLength(1);
  });
});
