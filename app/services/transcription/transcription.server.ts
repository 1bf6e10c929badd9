import { randomUUID } from "node:crypto";
import type { Transaction } from "kysely";
import { findRecordingByKey } from "~/models/recording.server";
import type { Database } from "~/models/schema";
import {
  findJobByName,
  findJobOfRecording,
  lockRecording,
  replaceJob,
  setTranscriptionState,
} from "~/models/transcription.server";
import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { sendWakeUp } from "../jobs/queue.server";
import { applyMetadata, type MetadataInput } from "../recordings/metadata.server";
import { confirmAudio, withAudio } from "../recordings/recordings.server";

// Transcription jobs (issue 5). The job row is the truth: exactly one per recording, claimed atomically,
// held by a lease the worker renews while it runs; pg-boss only wakes a worker. The recording's status
// flips to `processing` in the transaction that creates the job, so a second click finds the job and
// starts nothing. A worker that dies leaves a lapsed lease, and the sweep queues the job again.
// A run of a job is in transcription/job.server.ts, the transcript it leaves in transcripts.server.ts.

export const TRANSCRIPTION_QUEUE = "transcription";

type Tx = Transaction<Database>;

export function wake(jobId: string, options: { trx?: Tx; startAfterSeconds?: number } = {}) {
  return sendWakeUp(TRANSCRIPTION_QUEUE, jobId, { ...options, expireInSeconds: 4 * 60 * 60 });
}

/**
 * SPEC §7 transcribe_v2. Idempotent: while a run is queued or running, or once the transcript exists,
 * the same job_name comes back and no engine is called again.
 */
export async function requestTranscription(args: { userId: string; key: string; metadata?: MetadataInput }) {
  // Straight after the PUT, without update-file-metadata first, the upload is checked here (issue 22).
  const recording = await confirmAudio(args.userId, args.key);
  return startTranscription(args.userId, recording, args.metadata ?? {});
}

/** Starts (or finds) the job of a recording already found and checked: ready, its audio still stored. */
async function startTranscription(
  userId: string,
  recording: { id: string; language_code: string },
  metadata: MetadataInput,
) {
  // The client's job_name is not used: names are the server's, so one cannot guess another's.
  const { display_name, language_code, tags, template_id } = metadata;
  await applyMetadata({ userId, recording, metadata: { display_name, language_code, tags, template_id } });
  const args = { userId };
  const engine = getConfig().speech.engine;
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const locked = await lockRecording(trx, { ownerId: args.userId, recordingId: recording.id });
      if (!locked) throw new DomainError("not_found", "recordings:errors.recordingNotFound");
      const existing = await findJobOfRecording(trx, { ownerId: args.userId, recordingId: recording.id });
      const running = existing && (existing.status === "queued" || existing.status === "running");
      const done = locked.transcription_status === "completed" && locked.transcript_key;
      if (existing && (running || done)) {
        return { job_name: existing.job_name, status: done ? ("completed" as const) : ("processing" as const) };
      }
      const jobName = `transcribe-${randomUUID()}`;
      const job = await replaceJob(trx, { ownerId: args.userId, recordingId: recording.id, jobName, engine });
      await setTranscriptionState(trx, { ownerId: args.userId, recordingId: recording.id, status: "processing" });
      await wake(job.id, { trx });
      return { job_name: jobName, status: "processing" as const };
    });
}

/** SPEC §7 transcribe_v2/{job}/status, for the owner only. */
export async function transcriptionStatus(args: { userId: string; jobName: unknown }) {
  if (typeof args.jobName !== "string" || !args.jobName.trim()) {
    throw new DomainError("invalid", "transcriptions:errors.jobNameRequired");
  }
  const job = await findJobByName({ ownerId: args.userId, jobName: args.jobName.trim() });
  if (!job) throw new DomainError("not_found", "transcriptions:errors.jobNotFound");
  return {
    job_name: job.job_name,
    status: job.transcription_status,
    s3_key: job.storage_key,
    transcript_key: job.transcript_key,
    error: job.error_key ?? null,
  };
}

/** After an upload: start transcription when configured (ARCHITECTURE.md, default on). */
export async function autoStartTranscription(args: { userId: string; key: string }) {
  if (!getConfig().flags.autoStartTranscription) return null;
  const recording = await findRecordingByKey({ ownerId: args.userId, key: args.key });
  if (!recording || recording.upload_status !== "ready") return null;
  // The recording just found is passed on rather than looked up by its key again (confirmAudio would find it
  // ready and only check that its audio is stored).
  return startTranscription(args.userId, withAudio(recording), {});
}
