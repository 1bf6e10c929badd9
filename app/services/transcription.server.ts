import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Transaction } from "kysely";
import { findRecordingByKey } from "~/models/recording.server";
import type { Database } from "~/models/schema";
import { deleteTranscriptRow, findTranscriptByKey, insertTranscript } from "~/models/transcript.server";
import {
  claimJob,
  deleteJobOfRecording,
  findRecordingForJob,
  lockRecording,
  setTranscriptionState,
  findJobByName,
  findJobOfRecording,
  finishJob,
  listWaitingJobs,
  markEngineTimes,
  renewLease,
  replaceJob,
  requeueLapsedJobs,
} from "~/models/transcription.server";
import { getConfig } from "./config.server";
import { getDb } from "./db.server";
import { DomainError } from "./domain-error.server";
import { sendWakeUp } from "./job-wakeup.server";
import { autoCreateLetter } from "./letters.server";
import { applyMetadata, MAX_DURATION_SECONDS, requireAudio } from "./recordings.server";
import { getSpeechEngine } from "./speech/engine.server";
import { normaliseAudio } from "./speech/normalise-audio.server";
import { buildTranscript, isEmptyResult, type TranscriptDocument } from "./speech/transcript-format";
import { SpeechEngineError } from "./speech/types";
import { getVocabulary } from "./speech/vocabulary.server";
import { getStorage, makeStorageKey } from "./storage.server";
import { recordUsage } from "./usage.server";

// Transcription jobs (issue 5). The job row is the truth: exactly one per recording, claimed atomically,
// held by a lease the worker renews while it runs; pg-boss only wakes a worker. The recording's status
// flips to `processing` in the transaction that creates the job, so a second click finds the job and
// starts nothing. A worker that dies leaves a lapsed lease, and the sweep queues the job again.

export const TRANSCRIPTION_QUEUE = "transcription";
export const LEASE_MS = 90_000;
const HEARTBEAT_MS = 30_000;
/** Runs per job before a transient failure counts as final. */
export const MAX_ATTEMPTS = 3;

type Tx = Transaction<Database>;

function wake(jobId: string, options: { trx?: Tx; startAfterSeconds?: number } = {}) {
  return sendWakeUp(TRANSCRIPTION_QUEUE, jobId, { ...options, expireInSeconds: 4 * 60 * 60 });
}

type TranscribeMetadata = {
  display_name?: unknown;
  language_code?: unknown;
  tags?: unknown;
  template_id?: unknown;
};

/**
 * SPEC §7 transcribe_v2. Idempotent: while a run is queued or running, or once the transcript exists,
 * the same job_name comes back and no engine is called again.
 */
export async function requestTranscription(args: { userId: string; key: unknown; metadata?: unknown }) {
  const recording = await requireAudio(args.userId, args.key);
  const metadata = (args.metadata && typeof args.metadata === "object" ? args.metadata : {}) as TranscribeMetadata;
  // The client's job_name is not used: names are the server's, so one cannot guess another's.
  const { display_name, language_code, tags, template_id } = metadata;
  await applyMetadata({ userId: args.userId, recording, metadata: { display_name, language_code, tags, template_id } });
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

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "skribent-transcribe-"));
}

/** What a finished run leaves: the recording's status and, on success, its transcript. */
async function settle(
  job: { id: string; recording_id: string; owner_id: string; attempts: number },
  outcome:
    | { ok: true; document: TranscriptDocument; key: string; tags: string[] }
    | { ok: false; final: boolean; errorKey: string; detail: string },
) {
  return getDb()
    .transaction()
    .execute(async (trx) => {
      if (!outcome.ok) {
        const finished = await finishJob(trx, {
          id: job.id,
          attempt: job.attempts,
          status: outcome.final ? "failed" : "queued",
          errorKey: outcome.errorKey,
          errorDetail: outcome.detail,
        });
        if (finished && outcome.final) {
          await setTranscriptionState(trx, { ownerId: job.owner_id, recordingId: job.recording_id, status: "failed" });
        }
        return finished;
      }
      const { document, key } = outcome;
      const inserted = await insertTranscript(trx, {
        ownerId: job.owner_id,
        recordingId: job.recording_id,
        key,
        language: document.language_code,
        engine: document.engine,
        audioSeconds: document.audio_seconds,
        wordCount: document.word_count,
        speakerCount: Object.keys(document.speakers_info).length,
        tags: outcome.tags,
      });
      // Another run got there first (exactly one transcript per recording): this one changes nothing.
      if (!inserted) return false;
      const finished = await finishJob(trx, { id: job.id, attempt: job.attempts, status: "completed" });
      if (!finished) throw new Error("transcription run lost its lease before it finished");
      await setTranscriptionState(trx, {
        ownerId: job.owner_id,
        recordingId: job.recording_id,
        status: "completed",
        transcriptKey: key,
      });
      return true;
    });
}

/**
 * One run of a job, as the worker calls it. Safe to call twice for the same job (a duplicate wake-up, a
 * retry after a crash): only one caller claims it, and only one transcript can be stored.
 */
export async function runTranscriptionJob(jobId: string): Promise<"completed" | "failed" | "retry" | "skipped"> {
  const job = await claimJob(jobId, LEASE_MS);
  if (!job) return "skipped";
  const controller = new AbortController();
  running.set(job.recording_id, controller);
  const heartbeat = setInterval(() => {
    renewLease(job.id, job.attempts, LEASE_MS).then(
      (held) => {
        // Deleted, reset or taken over: stop the engine.
        if (!held) controller.abort(new Error("transcription job was cancelled"));
      },
      (error) => console.warn("[transcription] lease renewal failed:", (error as Error).message),
    );
  }, HEARTBEAT_MS);
  const dir = tempDir();
  let storedKey: string | undefined;
  try {
    const recording = await findRecordingForJob({ ownerId: job.owner_id, recordingId: job.recording_id });
    if (!recording) return "skipped";
    const source = path.join(dir, "source");
    const stream = await getStorage().getStream(recording.storage_key);
    if (!stream) throw new SpeechEngineError("permanent", "The audio file is missing from storage");
    await pipeline(stream as Readable, fs.createWriteStream(source));
    const audio = await normaliseAudio({ input: source, outputDir: dir, maxDurationSeconds: MAX_DURATION_SECONDS });
    const language = recording.language_code.startsWith("en") ? "en" : "de";
    const engine = getSpeechEngine();
    await markEngineTimes(job.id, { engine_called_at: new Date() });
    const result = await engine.transcribe({
      file: audio.file,
      language,
      durationSeconds: audio.durationSeconds,
      vocabulary: getVocabulary(language),
      signal: controller.signal,
    });
    await markEngineTimes(job.id, { engine_returned_at: new Date() });
    await recordUsage({
      userId: job.owner_id,
      endpoint: "transcribe_v2",
      units: result.audioSeconds || audio.durationSeconds,
      unit: "audio_second",
      unitPriceUsd: engine.name === "local" ? 0 : getConfig().prices.speechPerMinuteUsd / 60,
    });
    // Silence or noise: a clear failure, never an empty transcript that a letter could be written from.
    if (isEmptyResult(result)) {
      throw new SpeechEngineError("permanent", "The engine recognised no speech", {
        userMessageKey: "transcriptions:errors.noSpeech",
      });
    }
    const document = buildTranscript(result);
    storedKey = makeStorageKey({ ownerId: job.owner_id, area: "transcripts", extension: ".json" });
    await getStorage().put({
      key: storedKey,
      body: Buffer.from(JSON.stringify(document)),
      contentType: "application/json",
    });
    const saved = await settle(job, { ok: true, document, key: storedKey, tags: recording.tags });
    if (!saved) {
      await getStorage().delete(storedKey);
      return "skipped";
    }
    storedKey = undefined;
    // Transcript plus Arztbrief: the letter job starts here, on the server (ADR 0012).
    await autoCreateLetter({
      userId: job.owner_id,
      recordingId: job.recording_id,
      sourceKey: recording.storage_key,
      mode: recording.transcription_mode,
    });
    return "completed";
  } catch (error) {
    if (storedKey)
      await getStorage()
        .delete(storedKey)
        .catch(() => undefined);
    if (controller.signal.aborted) return "skipped";
    const speechError = error instanceof SpeechEngineError ? error : undefined;
    const transient = speechError ? speechError.kind === "transient" : true;
    const final = !transient || job.attempts >= MAX_ATTEMPTS;
    const errorKey =
      speechError?.options.userMessageKey ??
      (speechError?.kind === "not_configured"
        ? "transcriptions:errors.engineNotConfigured"
        : "transcriptions:errors.failed");
    const detail = error instanceof Error ? error.message : String(error);
    console.warn(`[transcription] job ${job.id} attempt ${job.attempts} failed:`, detail);
    const settled = await settle(job, { ok: false, final, errorKey, detail }).catch((settleError) => {
      // The recording was deleted meanwhile (the job row went with it): nothing to record.
      console.warn("[transcription] could not record the failure:", (settleError as Error).message);
      return false;
    });
    if (!settled) return "skipped";
    if (!final) await wake(job.id, { startAfterSeconds: 30 * job.attempts });
    return final ? "failed" : "retry";
  } finally {
    running.delete(job.recording_id);
    clearInterval(heartbeat);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs in this process, by recording: a delete or reset stops its engine call at once. */
const running = new Map<string, AbortController>();

/**
 * Delete and reset call this first: a run here is aborted now; a run in another process notices at its
 * next lease renewal, when it finds its job row gone, and stores nothing.
 */
export function cancelTranscription(recordingId: string) {
  running.get(recordingId)?.abort(new Error("transcription job was cancelled"));
}

/** The sweep: runs whose worker died are queued again, and queued jobs whose wake-up got lost are re-sent. */
export async function sweepTranscriptionJobs(now = new Date()) {
  const lapsed = await requeueLapsedJobs(now);
  const waiting = await listWaitingJobs(new Date(now.getTime() - 2 * 60_000));
  const ids = new Set([...lapsed, ...waiting.map((w) => w.id)]);
  for (const id of ids) await wake(id);
  return { requeued: lapsed.length, resent: ids.size };
}

function transcriptKeyFrom(key: unknown) {
  const value = typeof key === "string" ? key.trim().replace(/^\/+/, "") : "";
  if (!value) throw new DomainError("invalid", "transcriptions:errors.transcriptKeyRequired");
  // SPEC: the client strips the leading "transcripts/"; both forms are accepted.
  return value.startsWith("transcripts/") ? value : `transcripts/${value}`;
}

async function requireTranscript(userId: string, key: unknown) {
  const row = await findTranscriptByKey({ ownerId: userId, key: transcriptKeyFrom(key) });
  if (!row) throw new DomainError("not_found", "transcriptions:errors.transcriptNotFound");
  return row;
}

/** SPEC §7 transcript_v2/{key}: the stored transcript, for its owner. */
export async function getTranscript(args: { userId: string; key: unknown }) {
  const row = await requireTranscript(args.userId, args.key);
  const stream = await getStorage().getStream(row.storage_key);
  if (!stream) throw new DomainError("not_found", "transcriptions:errors.transcriptNotFound");
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  const document = JSON.parse(Buffer.concat(chunks).toString("utf8")) as TranscriptDocument;
  return { row, document };
}

/**
 * Stops any run for the recording before a delete: the job row goes while the recording row is locked, so
 * a run elsewhere can no longer settle (it needs its job row) and removes what it stored.
 */
export async function stopTranscription(args: { userId: string; recordingId: string }) {
  cancelTranscription(args.recordingId);
  await getDb()
    .transaction()
    .execute(async (trx) => {
      await lockRecording(trx, { ownerId: args.userId, recordingId: args.recordingId });
      await deleteJobOfRecording(trx, { ownerId: args.userId, recordingId: args.recordingId });
    });
}

/**
 * Removes a recording's transcript and job (delete-transcript, reset) and stops any run, in one
 * transaction on the locked recording; the recording returns to "pending". True when there was a transcript.
 */
export async function removeTranscription(args: { userId: string; recordingId: string }) {
  const ids = { ownerId: args.userId, recordingId: args.recordingId };
  cancelTranscription(args.recordingId);
  const { rows, key } = await getDb()
    .transaction()
    .execute(async (trx) => {
      const locked = await lockRecording(trx, ids);
      const count = await deleteTranscriptRow(trx, ids);
      await deleteJobOfRecording(trx, ids);
      await setTranscriptionState(trx, { ...ids, status: "pending", transcriptKey: null });
      return { rows: count, key: locked?.transcript_key ?? null };
    });
  if (key) await getStorage().delete(key);
  return rows > 0 || key !== null;
}

/** SPEC §7 delete-transcript: the transcript goes, the recording returns to "pending". */
export async function deleteTranscript(args: { userId: string; transcriptKey: unknown }) {
  const row = await requireTranscript(args.userId, args.transcriptKey);
  // The recording names the same object as the row: both are set in one transaction (settle).
  await removeTranscription({ userId: args.userId, recordingId: row.recording_id });
  return { success: true as const };
}

/** After an upload: start transcription when configured (ARCHITECTURE.md, default on). */
export async function autoStartTranscription(args: { userId: string; key: string }) {
  if (!getConfig().flags.autoStartTranscription) return null;
  const recording = await findRecordingByKey({ ownerId: args.userId, key: args.key });
  if (!recording || recording.upload_status !== "ready") return null;
  return requestTranscription({ userId: args.userId, key: args.key });
}
