import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { action as deleteAllAction } from "~/routes/api.delete-all";
import { action as deleteTranscriptAction } from "~/routes/api.delete-transcript";
import { action as forceCleanupAction } from "~/routes/api.force-cleanup";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { action as tagsAction } from "~/routes/api.update-file-tags";
import { getDb } from "~/models/db.server";
import { getStorage } from "~/services/storage/storage.server";
import { runTranscriptionJob } from "~/services/transcription/job.server";
import { apiClientFor } from "../support/api-client";
import { call, jobOf, recordingOf, setupTranscriptionWorld, SPEECHMATICS_ENV } from "../support/transcription-world";
import { setupTestApp } from "../setup/app";

// The transcription job end to end on the app's side (issue 5), after the transcript: the JSON API as a client sees it,
// the job run against a protocol-faithful Speechmatics server over HTTP (tests/support/transcription-world.ts), tags
// that follow the transcript, reset, delete-transcript, delete-all and a delete while the run is under way — no rows
// and no objects left behind. The job itself and its faults: transcription-job.test.ts.
const app = setupTestApp({ provider: true, env: SPEECHMATICS_ENV });
const { speechmatics, engine, upload } = setupTranscriptionWorld();

/** The transcript objects in the embedded store, as keys. */
function transcriptObjects() {
  const root = path.join(app.config.dataDir, "objects");
  const area = path.join(root, "transcripts");
  if (!fs.existsSync(area)) return [];
  return fs
    .readdirSync(area, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

describe("transcription (JSON API and job)", () => {
  it("tags follow to the transcript; reset and delete leave no rows and no objects behind", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    await runTranscriptionJob((await jobOf(key)).id);
    const { id, transcript_key: transcriptKey } = await recordingOf(key);

    await call(tagsAction, anna, "/api/update-file-tags", {
      s3_key: key,
      tags: ["Nachsorge"],
      update_all_related: true,
    });
    const tagged = await getDb()
      .selectFrom("transcripts")
      .where("recording_id", "=", id)
      .select("tags")
      .executeTakeFirst();
    expect(tagged?.tags).toEqual(["Nachsorge"]);

    // Reset: the transcript goes, the recording starts over.
    const reset = await call(forceCleanupAction, anna, "/api/force-cleanup", { s3_key: key });
    expect(reset.body).toEqual({
      cleanup_results: { medical_letters_deleted: 0, transcript_deleted: true, source_reset: true },
    });
    expect(await getStorage().head(transcriptKey!)).toBeNull();
    expect(await recordingOf(key)).toMatchObject({ transcription_status: "pending", transcript_key: null });
    expect(
      await getDb().selectFrom("transcription_jobs").where("recording_id", "=", id).select("id").execute(),
    ).toEqual([]);

    // Transcribed again, then deleted with everything.
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    await runTranscriptionJob((await jobOf(key)).id);
    const second = (await recordingOf(key)).transcript_key!;
    expect((await call(deleteAllAction, anna, "/api/delete-all", { s3_key: key })).body).toEqual({ success: true });
    for (const table of ["recordings", "transcripts", "transcription_jobs"] as const) {
      const column = table === "recordings" ? "id" : "recording_id";
      expect(await getDb().selectFrom(table).where(column, "=", id).select(column).execute()).toEqual([]);
    }
    expect(await getStorage().head(key)).toBeNull();
    expect(await getStorage().head(second)).toBeNull();
  });

  it("delete-transcript removes the transcript and returns the recording to pending", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    await runTranscriptionJob((await jobOf(key)).id);
    const transcriptKey = (await recordingOf(key)).transcript_key!;
    expect(
      await call(deleteTranscriptAction, anna, "/api/delete-transcript", { transcript_key: transcriptKey }),
    ).toEqual({
      status: 200,
      body: { success: true },
    });
    expect(await getStorage().head(transcriptKey)).toBeNull();
    expect(await recordingOf(key)).toMatchObject({ transcription_status: "pending", transcript_key: null });
    expect(
      (await call(deleteTranscriptAction, anna, "/api/delete-transcript", { transcript_key: transcriptKey })).status,
    ).toBe(404);
  });

  it("deleting a recording while its transcription runs cancels the run and stores nothing", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna);
    await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    const job = await jobOf(key);
    const { id } = await recordingOf(key);
    // The engine holds the job (Speechmatics still "running") while the user deletes the recording.
    speechmatics().pollsUntilDone = 1_000_000;
    // Earlier tests' polls count too: wait for one of this run's, so the run is under way before the delete
    // (a delete that overtakes the claim is only noticed at the next lease renewal, 30 s later).
    const polled = speechmatics().calls("status");
    const run = runTranscriptionJob(job.id);
    await expect.poll(() => speechmatics().calls("status"), { timeout: 10_000 }).toBeGreaterThan(polled);
    await call(deleteAllAction, anna, "/api/delete-all", { s3_key: key });
    expect(await run).toBe("skipped");
    speechmatics().pollsUntilDone = 0;
    expect(await getDb().selectFrom("transcripts").where("recording_id", "=", id).select("id").execute()).toEqual([]);
    // Every transcript object in the store belongs to a transcript row: the cancelled run left none.
    const rows = await getDb().selectFrom("transcripts").select("storage_key").execute();
    expect(transcriptObjects().sort()).toEqual(rows.map((r) => r.storage_key).sort());
  });
});
