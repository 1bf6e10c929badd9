import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { insertTranscript } from "~/models/transcript.server";
import {
  deleteJobOfRecording,
  findJobById,
  findRecordingForJob,
  lockRecording,
  markEngineTimes,
  setTranscriptionState,
  transcriptionJobLease,
} from "~/models/transcription.server";
import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";
import { autoCreateLetter } from "../letters/letters.server";
import { MAX_DURATION_SECONDS } from "../recordings/recordings.server";
import { getSpeechEngine } from "../speech/engine.server";
import { normaliseAudio } from "../speech/normalise-audio.server";
import { buildTranscript, isEmptyResult, type TranscriptDocument } from "../speech/transcript-format";
import { SpeechEngineError } from "../speech/types";
import { engineVocabulary } from "./user-vocabulary.server";
import { getStorage, makeStorageKey } from "../storage/storage.server";
import { SPEECH_ROLES, waitingForModels } from "../model-store/downloads.server";
import { wake } from "./transcription.server";
import { recordUsage } from "../admin/usage.server";

// A run of a transcription job (transcription.server.ts creates them): claimed under a lease the heartbeat
// renews while the engine works, settled with the recording's status in one transaction, retried while the
// failure is transient. Delete and reset stop a run here at once, elsewhere at its next lease renewal.

export const LEASE_MS = 90_000;
const HEARTBEAT_MS = 30_000;
/** How often a job waiting for its model looks again (a model's arrival wakes it sooner). */
export const MODEL_WAIT_SECONDS = 15;
/** Runs per job before a transient failure counts as final. */
export const MAX_ATTEMPTS = 3;

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
        const finished = await transcriptionJobLease.finishFailed(trx, job, outcome);
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
      const finished = await transcriptionJobLease.finish(trx, {
        id: job.id,
        attempt: job.attempts,
        status: "completed",
      });
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
export async function runTranscriptionJob(
  jobId: string,
): Promise<"completed" | "failed" | "retry" | "skipped" | "waiting"> {
  // The local engine's models are still downloading (issue 21): the job stays queued, unclaimed (no attempt is
  // used up), and is woken again shortly, or at once when a model arrives (jobs/registry.server.ts).
  if (getConfig().speech.engine === "local" && waitingForModels(SPEECH_ROLES)) {
    // Only a job still queued keeps waiting: a deleted or reset one is not woken again.
    if ((await findJobById(jobId))?.status !== "queued") return "skipped";
    await wake(jobId, { startAfterSeconds: MODEL_WAIT_SECONDS });
    return "waiting";
  }
  const job = await transcriptionJobLease.claim(jobId, LEASE_MS);
  if (!job) return "skipped";
  const controller = new AbortController();
  running.set(job.recording_id, controller);
  const heartbeat = setInterval(() => {
    transcriptionJobLease.renew(job.id, job.attempts, LEASE_MS).then(
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
      // The built-in list with the doctor's own terms (issue 24: corrections teach the vocabulary).
      vocabulary: await engineVocabulary({ userId: job.owner_id, language }),
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
  const lapsed = await transcriptionJobLease.requeueLapsed(now);
  const waiting = await transcriptionJobLease.listWaiting(new Date(now.getTime() - 2 * 60_000));
  const ids = new Set([...lapsed, ...waiting.map((w) => w.id)]);
  for (const id of ids) await wake(id);
  return { requeued: lapsed.length, resent: ids.size };
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
