import { describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as createAction } from "~/routes/api.medical-letter-v2";
import { getDb } from "~/models/db.server";
import { runLetterJob, sweepLetterJobs } from "~/services/letters/job.server";
import { LETTER_MAX_ATTEMPTS } from "~/services/letters/job-outcome.server";
import { reply } from "../support/fake-openai-chat";
import { letterJobOf, letterStatusOf, seedTranscribedRecording } from "../support/letter-fixtures";
import { call, CONSULTATION, letterResponder, setupLetterModel, signInWith } from "../support/letters-api";
import { setupTestApp } from "../setup/app";

// Letters through the JSON API (issue 6), with the real OpenAI-compatible adapter talking HTTP to a protocol-faithful
// chat-completions server that records what it is sent (tests/support/letters-api.ts): creation that does not simply
// succeed — the guard (not a patient conversation), invalid output, transient failures, the last attempt, a worker that
// died, refusals, the rate limit — and a job whose transcript went away; never a status stuck in "processing".
const app = setupTestApp({ provider: true });
const llm = setupLetterModel();
const signIn = signInWith(app);

describe("letter creation", () => {
  it("ends with 'Dies ist kein Patientengespräch' for a transcript that is not clinical: no letter row, never retried", async () => {
    const { client, userId } = await signIn("anna-berger");
    const { sourceKey, recordingId } = await seedTranscribedRecording({
      ownerId: userId,
      lines: [{ speaker: "S1", text: "Das Wetter ist heute schön und der Zug hatte Verspätung." }],
    });
    llm().responder = letterResponder("other");
    await call(createAction, client, "/api/medical-letter-v2", { source_key: sourceKey });
    const job = await letterJobOf(recordingId);
    const before = llm().chatRequests().length;
    expect(await runLetterJob(job!.id)).toBe("failed");
    expect(llm().chatRequests().length - before).toBe(1);
    const after = await letterJobOf(recordingId);
    expect(after).toMatchObject({ status: "failed", attempts: 1, error_key: "letters:errors.notPatientConversation" });
    expect(after!.error_detail).toContain("Dies ist kein Patientengespräch");
    expect((await letterStatusOf(recordingId)).medical_letter_status).toBe("failed");
    const letters = await getDb().selectFrom("letters").where("recording_id", "=", recordingId).select("id").execute();
    expect(letters).toHaveLength(0);
    const files = await call(filesLoader, client, "/api/files");
    const file = files.body.files.find((f: { key: string }) => f.key === sourceKey);
    expect(file.metadata.medical_letter_status).toBe("failed");
    expect(file.metadata.medical_letter_key).toBeNull();
  });

  it("marks output that never validates as structure_error, never as a partial letter", async () => {
    const { client, userId } = await signIn("anna-berger");
    const { sourceKey, recordingId } = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION });
    llm().responder = () => reply.text('{"document_type": "patient_conversation", "sections": {"s1": "nur ein Teil"');
    await call(createAction, client, "/api/medical-letter-v2", { source_key: sourceKey });
    const job = await letterJobOf(recordingId);
    expect(await runLetterJob(job!.id)).toBe("failed");
    expect((await letterStatusOf(recordingId)).medical_letter_status).toBe("structure_error");
    expect(await letterJobOf(recordingId)).toMatchObject({ error_key: "letters:errors.invalidStructure" });
    const letters = await getDb().selectFrom("letters").where("recording_id", "=", recordingId).select("id").execute();
    expect(letters).toHaveLength(0);
  });

  it("retries transient failures (429 with Retry-After, 500) within the adapter, then as a job, and finishes", async () => {
    const { client, userId } = await signIn("anna-berger");
    const { sourceKey, recordingId } = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION });
    await call(createAction, client, "/api/medical-letter-v2", { source_key: sourceKey });
    const job = await letterJobOf(recordingId);
    llm().replies = [reply.rateLimited(0), reply.error(500)];
    expect(await runLetterJob(job!.id)).toBe("completed");

    const second = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION });
    await call(createAction, client, "/api/medical-letter-v2", { source_key: second.sourceKey });
    const secondJob = await letterJobOf(second.recordingId);
    // Three 500s exhaust the adapter's attempts: the job is queued again, the status stays "processing".
    llm().replies = [reply.error(500), reply.error(500), reply.error(500)];
    expect(await runLetterJob(secondJob!.id)).toBe("retry");
    expect(await letterJobOf(second.recordingId)).toMatchObject({ status: "queued", attempts: 1 });
    expect((await letterStatusOf(second.recordingId)).medical_letter_status).toBe("processing");
    expect(await runLetterJob(secondJob!.id)).toBe("completed");
    expect((await letterStatusOf(second.recordingId)).medical_letter_status).toBe("completed");
  });

  it("gives up after the last attempt with a clear failure, not a status stuck in processing", async () => {
    const { client, userId } = await signIn("anna-berger");
    const { sourceKey, recordingId } = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION });
    await call(createAction, client, "/api/medical-letter-v2", { source_key: sourceKey });
    const job = await letterJobOf(recordingId);
    llm().responder = () =>
      reply.error(503, { style: "llamacpp", message: "Loading model", type: "unavailable_error" });
    for (let attempt = 1; attempt < LETTER_MAX_ATTEMPTS; attempt++) expect(await runLetterJob(job!.id)).toBe("retry");
    expect(await runLetterJob(job!.id)).toBe("failed");
    expect(await letterJobOf(recordingId)).toMatchObject({
      status: "failed",
      error_key: "letters:errors.creationFailed",
    });
    expect((await letterStatusOf(recordingId)).medical_letter_status).toBe("failed");
  });

  it("requeues a job whose worker died (lapsed lease) at the sweep", async () => {
    const { client, userId } = await signIn("anna-berger");
    const { sourceKey, recordingId } = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION });
    await call(createAction, client, "/api/medical-letter-v2", { source_key: sourceKey });
    const job = await letterJobOf(recordingId);
    await getDb()
      .updateTable("letter_jobs")
      .set({ status: "running", attempts: 1, lease_until: new Date(Date.now() - 1000) })
      .where("id", "=", job!.id)
      .execute();
    const swept = await sweepLetterJobs();
    expect(swept.requeued).toBeGreaterThanOrEqual(1);
    expect(await letterJobOf(recordingId)).toMatchObject({ status: "queued" });
    expect(await runLetterJob(job!.id)).toBe("completed");
  });

  it("refuses a letter before the transcript exists, and another user's recording", async () => {
    const { client, userId } = await signIn("anna-berger");
    const other = await signIn("jonas-keller");
    const theirs = await seedTranscribedRecording({ ownerId: other.userId, lines: CONSULTATION });
    expect((await call(createAction, client, "/api/medical-letter-v2", { source_key: theirs.sourceKey })).status).toBe(
      404,
    );
    const mine = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION });
    await getDb()
      .updateTable("recordings")
      .set({ transcription_status: "processing" })
      .where("id", "=", mine.recordingId)
      .execute();
    const refused = await call(createAction, client, "/api/medical-letter-v2", { source_key: mine.sourceKey });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe("There is no completed transcript for this recording yet.");
  });

  it("is rate-limited per user", async () => {
    const { client, userId } = await signIn("emily-clarke");
    const { sourceKey } = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      statuses.push((await call(createAction, client, "/api/medical-letter-v2", { source_key: sourceKey })).status);
    }
    expect(statuses.slice(0, 30).every((s) => s === 202)).toBe(true);
    expect(statuses[30]).toBe(429);
  });
});

describe("a letter job whose transcript went away", () => {
  it("fails with a clear reason instead of staying in processing", async () => {
    const { client, userId } = await signIn("anna-berger");
    const { sourceKey, recordingId, transcriptKey } = await seedTranscribedRecording({
      ownerId: userId,
      lines: CONSULTATION,
    });
    await call(createAction, client, "/api/medical-letter-v2", { source_key: sourceKey });
    await getDb().deleteFrom("transcripts").where("storage_key", "=", transcriptKey).execute();
    const job = await letterJobOf(recordingId);
    expect(await runLetterJob(job!.id)).toBe("failed");
    expect(await letterJobOf(recordingId)).toMatchObject({
      status: "failed",
      error_key: "letters:errors.transcriptMissing",
    });
    expect((await letterStatusOf(recordingId)).medical_letter_status).toBe("failed");
  });
});
