import { type Kysely, type Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import { recordingForUpdate, recordingJobTable, updateRecordingOfOwner } from "./recording-job.server";
import type { Database, LetterJobKind, LetterStatus } from "./schema";

// Letter jobs (ADR 0012): one per recording, claimed atomically and held by a lease its worker renews, as
// transcription jobs are (transcription.server.ts). The worker names a job by id and acts for the job's owner,
// whose id it carries; every query a user triggers is scoped by owner (STYLE.md §2).

type Db = Kysely<Database> | Transaction<Database>;
type Tx = Transaction<Database>;

const letterJobs = recordingJobTable("letter_jobs");
const jobColumns = [...letterJobs.columns, "kind", "template_id"] as const;

/** The recording row, locked for this transaction: serialises starting, settling and removing a letter. */
export async function lockRecordingForLetter(trx: Tx, args: { ownerId: string; recordingId: string }) {
  return recordingForUpdate(trx, args)
    .select([
      "id",
      "storage_key",
      "transcription_status",
      "transcript_key",
      "medical_letter_status",
      "template_id",
      "language_code",
    ])
    .executeTakeFirst();
}

export async function setLetterStatus(
  db: Db,
  args: { ownerId: string; recordingId: string; status: LetterStatus; templateId?: string },
) {
  await updateRecordingOfOwner(db, args, {
    medical_letter_status: args.status,
    ...(args.templateId ? { template_id: args.templateId } : {}),
  });
}

export async function findLetterJobOfRecording(db: Db, args: { ownerId: string; recordingId: string }) {
  return letterJobs.ofRecording(db, args).select(jobColumns).executeTakeFirst();
}

export async function deleteLetterJobOfRecording(db: Db, args: { ownerId: string; recordingId: string }) {
  await letterJobs.deleteOfRecording(db, args);
}

/** A fresh run: replaces a finished job of the recording (at most one letter job per recording). */
export async function replaceLetterJob(
  db: Db,
  args: {
    ownerId: string;
    recordingId: string;
    jobName: string;
    kind: LetterJobKind;
    templateId: string;
    engine: string;
    /** A regeneration's scope, base version and proposal line (kind "regenerate" only). */
    regeneration?: RegenerationOrder;
  },
) {
  await deleteLetterJobOfRecording(db, args);
  const order = args.regeneration;
  return db
    .insertInto("letter_jobs")
    .values({
      ...letterJobs.queuedRow(args),
      kind: args.kind,
      template_id: args.templateId,
      ...(order
        ? {
            scope: order.scope,
            section_title: order.sectionTitle,
            base_version: order.baseVersion,
            query: order.query,
          }
        : {}),
    })
    .returning(["id", "job_name"])
    .executeTakeFirstOrThrow();
}

/** What a regeneration job (ADR 0032) is asked to propose. */
export type RegenerationOrder = {
  scope: "all" | "section";
  sectionTitle: string | null;
  baseVersion: number;
  query: string;
};

/** A regeneration's run made its proposal: the editor and the status call lead to it. */
export async function setLetterJobProposal(db: Db, args: { ownerId: string; jobId: string; proposalId: string }) {
  await db
    .updateTable("letter_jobs")
    .set({ proposal_id: args.proposalId })
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.jobId)
    .execute();
}

/** The recording's letter job as the regeneration status shows it, with its proposal's decision. */
export async function findLetterJobState(db: Db, args: { ownerId: string; recordingId: string }) {
  return db
    .selectFrom("letter_jobs")
    .leftJoin("letter_proposals", (join) =>
      join
        .onRef("letter_proposals.id", "=", "letter_jobs.proposal_id")
        .onRef("letter_proposals.owner_id", "=", "letter_jobs.owner_id"),
    )
    .where("letter_jobs.owner_id", "=", args.ownerId)
    .where("letter_jobs.recording_id", "=", args.recordingId)
    .select([
      "letter_jobs.kind",
      "letter_jobs.job_name",
      "letter_jobs.status",
      "letter_jobs.error_key",
      "letter_jobs.scope",
      "letter_jobs.section_title",
      "letter_jobs.base_version",
      "letter_jobs.created_at",
      "letter_jobs.finished_at",
      "letter_jobs.proposal_id",
      "letter_proposals.status as proposal_status",
    ])
    .executeTakeFirst();
}

/** Claim, renew and finish a run; the sweep's requeue and resend (job-lease.server.ts). */
export const letterJobLease = letterJobs.lease;

/** Whether a letter job is still queued (a deleted or reset one is not). */
export async function isLetterJobQueued(id: string) {
  const row = await getDb().selectFrom("letter_jobs").where("id", "=", id).select("status").executeTakeFirst();
  return row?.status === "queued";
}

/** What a run needs of its recording and transcript. */
export async function findRecordingForLetter(db: Db, args: { ownerId: string; recordingId: string }) {
  return db
    .selectFrom("recordings")
    .innerJoin("transcripts", "transcripts.recording_id", "recordings.id")
    .where("recordings.owner_id", "=", args.ownerId)
    .where("recordings.id", "=", args.recordingId)
    .select([
      "recordings.id",
      "recordings.storage_key",
      "recordings.language_code",
      "recordings.template_id",
      "transcripts.storage_key as transcript_storage_key",
    ])
    .executeTakeFirst();
}

/** The context the doctor attached to a recording (free text, PDF text, patient-record text). */
export async function listRecordingContext(args: { ownerId: string; recordingId: string }) {
  return getDb()
    .selectFrom("recording_context")
    .where("owner_id", "=", args.ownerId)
    .where("recording_id", "=", args.recordingId)
    .select(["kind", "text", "source_name"])
    .orderBy("created_at", "asc")
    .execute();
}
