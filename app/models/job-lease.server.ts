import { sql, type Kysely, type Selectable, type Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type {
  Database,
  LetterJobStatus,
  LetterJobsTable,
  RecordingJobColumns,
  TranscriptionJobStatus,
  TranscriptionJobsTable,
} from "./schema";

// The lease of a job whose row is the truth (transcription and letter jobs, ADR 0005): a worker claims a queued job,
// or a running one whose lease lapsed (its worker died), renews the lease while it works, and finishes its own run
// only; the sweep puts lapsed runs back in the queue and sends again what waited too long. Two workers handed the
// same job never both get it, and a late finisher never overwrites a later run.

type Db = Kysely<Database> | Transaction<Database>;

/** The columns both job tables share, the lease's among them. */
type LeaseColumns = RecordingJobColumns<string>;
type JobTables = { transcription_jobs: TranscriptionJobsTable; letter_jobs: LetterJobsTable };
type JobStatuses = { transcription_jobs: TranscriptionJobStatus; letter_jobs: LetterJobStatus };
type LeaseView = Kysely<{ job: LeaseColumns }>;

/** The job tables seen through their shared lease columns, so one implementation serves both. */
function leaseView(db: Db): LeaseView {
  return db as unknown as LeaseView;
}

export function jobLease<T extends keyof JobTables>(table: T) {
  type Job = Selectable<JobTables[T]>;
  type FinalStatus = Exclude<JobStatuses[T], "running">;
  // The view's name for the table; the query names the real one.
  const job = table as unknown as "job";
  return {
    /** Takes the job for one run: a queued job, or a running one whose lease lapsed. */
    async claim(id: string, leaseMs: number, now = new Date()): Promise<Job | undefined> {
      const row = await leaseView(getDb())
        .updateTable(job)
        .set({
          status: "running",
          attempts: sql`attempts + 1`,
          lease_until: new Date(now.getTime() + leaseMs),
          started_at: sql`coalesce(started_at, ${now})`,
          updated_at: now,
        })
        .where("id", "=", id)
        .where((eb) =>
          eb.or([eb("status", "=", "queued"), eb.and([eb("status", "=", "running"), eb("lease_until", "<", now)])]),
        )
        .returningAll()
        .executeTakeFirst();
      return row as Job | undefined;
    },

    /** Extends the lease of a run still in progress; false when the job is gone or no longer this run's. */
    async renew(id: string, attempt: number, leaseMs: number, now = new Date()) {
      const result = await leaseView(getDb())
        .updateTable(job)
        .set({ lease_until: new Date(now.getTime() + leaseMs), updated_at: now })
        .where("id", "=", id)
        .where("status", "=", "running")
        .where("attempts", "=", attempt)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Ends a run of `attempt`; a later run (after a lapsed lease) is not overwritten by a late finisher. */
    async finish(
      db: Db,
      args: { id: string; attempt: number; status: FinalStatus; errorKey?: string; errorDetail?: string },
    ) {
      const result = await leaseView(db)
        .updateTable(job)
        .set({
          status: args.status,
          lease_until: null,
          error_key: args.errorKey ?? null,
          error_detail: args.errorDetail?.slice(0, 500) ?? null,
          finished_at: args.status === "queued" ? null : new Date(),
          updated_at: new Date(),
        })
        .where("id", "=", args.id)
        .where("status", "=", "running")
        .where("attempts", "=", args.attempt)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /**
     * Ends a failed run of `job`: failed when the failure is `final`, else queued for another try. False when the
     * run was no longer this one's (as for `finish`).
     */
    async finishFailed(
      db: Db,
      job: { id: string; attempts: number },
      failure: { final: boolean; errorKey: string; detail: string },
    ) {
      return this.finish(db, {
        id: job.id,
        attempt: job.attempts,
        status: (failure.final ? "failed" : "queued") as FinalStatus,
        errorKey: failure.errorKey,
        errorDetail: failure.detail,
      });
    },

    /** Running jobs whose lease lapsed go back to the queue; their ids are returned to be sent again. */
    async requeueLapsed(now = new Date()) {
      const rows = await leaseView(getDb())
        .updateTable(job)
        .set({ status: "queued", lease_until: null, updated_at: now })
        .where("status", "=", "running")
        .where("lease_until", "<", now)
        .returning("id")
        .execute();
      return rows.map((r) => r.id);
    },

    /** Queued jobs that have waited long (a lost wake-up): sent again; claiming makes duplicates harmless. */
    async listWaiting(before: Date) {
      return leaseView(getDb())
        .selectFrom(job)
        .where("status", "=", "queued")
        .where("updated_at", "<", before)
        .select("id")
        .execute();
    },
  };
}
