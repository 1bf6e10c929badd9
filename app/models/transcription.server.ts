import { type Kysely, type Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import { recordingForUpdate, recordingJobTable, updateRecordingOfOwner } from "./recording-job.server";
import type { Database, TranscriptionStatus } from "./schema";

// Transcription jobs and the recording's transcription state, scoped by owner wherever a user asks (STYLE.md
// §2). The worker's own calls name a job by id: it acts for the job's owner, whose id it carries along. The
// transcripts' rows are in transcript.server.ts.

type Db = Kysely<Database> | Transaction<Database>;

const transcriptionJobs = recordingJobTable("transcription_jobs");
const jobColumns = [...transcriptionJobs.columns, "started_at", "engine_called_at", "engine_returned_at"] as const;

/** The recording row, locked for this transaction: serialises starting, settling and removing a run. */
export async function lockRecording(trx: Transaction<Database>, args: { ownerId: string; recordingId: string }) {
  return recordingForUpdate(trx, args).select(["id", "transcription_status", "transcript_key"]).executeTakeFirst();
}

/** The recording's SPEC §4 status, and its transcript key when given (null clears it). */
export async function setTranscriptionState(
  db: Db,
  args: { ownerId: string; recordingId: string; status: TranscriptionStatus; transcriptKey?: string | null },
) {
  await updateRecordingOfOwner(db, args, {
    transcription_status: args.status,
    ...(args.transcriptKey !== undefined ? { transcript_key: args.transcriptKey } : {}),
  });
}

export async function deleteJobOfRecording(db: Db, args: { ownerId: string; recordingId: string }) {
  await transcriptionJobs.deleteOfRecording(db, args);
}

/** What a run needs of its recording. */
export async function findRecordingForJob(args: { ownerId: string; recordingId: string }) {
  return getDb()
    .selectFrom("recordings")
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.recordingId)
    .select(["storage_key", "language_code", "tags", "transcription_mode"])
    .executeTakeFirst();
}

export async function findJobOfRecording(db: Db, args: { ownerId: string; recordingId: string }) {
  return transcriptionJobs.ofRecording(db, args).select(jobColumns).executeTakeFirst();
}

export async function findJobByName({ ownerId, jobName }: { ownerId: string; jobName: string }) {
  return getDb()
    .selectFrom("transcription_jobs")
    .innerJoin("recordings", "recordings.id", "transcription_jobs.recording_id")
    .where("transcription_jobs.owner_id", "=", ownerId)
    .where("transcription_jobs.job_name", "=", jobName)
    .select([
      "transcription_jobs.job_name",
      "transcription_jobs.status",
      "transcription_jobs.error_key",
      "transcription_jobs.created_at",
      "transcription_jobs.finished_at",
      "recordings.storage_key",
      "recordings.transcription_status",
      "recordings.transcript_key",
    ])
    .executeTakeFirst();
}

export async function findJobById(id: string) {
  return getDb().selectFrom("transcription_jobs").where("id", "=", id).select(jobColumns).executeTakeFirst();
}

/** A fresh run: replaces a finished job of the recording (there is at most one job per recording). */
export async function replaceJob(
  db: Db,
  args: { ownerId: string; recordingId: string; jobName: string; engine: string },
): Promise<{ id: string }> {
  await deleteJobOfRecording(db, args);
  return db
    .insertInto("transcription_jobs")
    .values(transcriptionJobs.queuedRow(args))
    .returning("id")
    .executeTakeFirstOrThrow();
}

/** Claim, renew and finish a run; the sweep's requeue and resend (job-lease.server.ts). */
export const transcriptionJobLease = transcriptionJobs.lease;

export async function markEngineTimes(id: string, set: { engine_called_at?: Date; engine_returned_at?: Date }) {
  await getDb().updateTable("transcription_jobs").set(set).where("id", "=", id).execute();
}

/** Why the owner's failed transcriptions of these recordings failed (i18n keys), by recording. */
export async function listFailedJobReasons({ ownerId, recordingIds }: { ownerId: string; recordingIds: string[] }) {
  if (recordingIds.length === 0) return new Map<string, string | null>();
  const rows = await getDb()
    .selectFrom("transcription_jobs")
    .where("owner_id", "=", ownerId)
    .where("recording_id", "in", recordingIds)
    .where("status", "=", "failed")
    .select(["recording_id", "error_key"])
    .execute();
  return new Map(rows.map((r) => [r.recording_id, r.error_key]));
}
