import type { Kysely, SelectQueryBuilder, Transaction, Updateable } from "kysely";
import { jobLease } from "./job-lease.server";
import type { Database, RecordingJobColumns, RecordingsTable } from "./schema";

// What transcription jobs (transcription.server.ts) and letter jobs (letter-job.server.ts) do alike with their
// recording: lock its row while a run is started, settled or removed, set its state, and keep at most one job
// row per recording and kind of job. Scoped by owner (STYLE.md §2).

type Db = Kysely<Database> | Transaction<Database>;
type OfRecording = { ownerId: string; recordingId: string };
type JobTable = "transcription_jobs" | "letter_jobs";
/** The job tables seen through the columns they share, so one query serves both. */
type JobView = Kysely<{ job: RecordingJobColumns<string> }>;

const recordingJobColumns = [
  "id",
  "recording_id",
  "owner_id",
  "job_name",
  "status",
  "attempts",
  "lease_until",
  "error_key",
  "error_detail",
  "engine",
  "created_at",
  "finished_at",
] as const;

/** The values of a fresh, queued job row of the recording (each table adds its own). */
function queuedJobRow(args: OfRecording & { jobName: string; engine: string }) {
  return {
    owner_id: args.ownerId,
    recording_id: args.recordingId,
    job_name: args.jobName,
    engine: args.engine,
    status: "queued" as const,
    updated_at: new Date(),
  };
}

/** The owner's recording row, to select from and lock for this transaction (`.select(...)` what is needed). */
export function recordingForUpdate(trx: Transaction<Database>, args: OfRecording) {
  return trx
    .selectFrom("recordings")
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.recordingId)
    .forUpdate();
}

/** Sets `set` on the owner's recording row (and its updated_at). */
export async function updateRecordingOfOwner(db: Db, args: OfRecording, set: Updateable<RecordingsTable>) {
  await db
    .updateTable("recordings")
    .set({ ...set, updated_at: new Date() })
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.recordingId)
    .execute();
}

/**
 * The job rows of `table`: at most one per recording (`ofRecording` to `.select(...)` what is needed,
 * `deleteOfRecording`, the values of a fresh `queuedRow`), and their `lease` (job-lease.server.ts).
 */
export function recordingJobTable<T extends JobTable>(table: T) {
  return {
    /** The columns a select of a job row names in both tables (each adds its own). */
    columns: recordingJobColumns,

    ofRecording(db: Db, args: OfRecording) {
      const query = db
        .selectFrom(table as JobTable)
        .where("owner_id", "=", args.ownerId)
        .where("recording_id", "=", args.recordingId);
      // Typed as a query of `table` alone, so what is selected has that table's column types.
      return query as unknown as SelectQueryBuilder<Database, T, object>;
    },

    async deleteOfRecording(db: Db, args: OfRecording) {
      await (db as unknown as JobView)
        .deleteFrom(table as unknown as "job")
        .where("owner_id", "=", args.ownerId)
        .where("recording_id", "=", args.recordingId)
        .execute();
    },

    queuedRow: queuedJobRow,

    /** Claim, renew and finish a run; the sweep's requeue and resend. */
    lease: jobLease(table),
  };
}
