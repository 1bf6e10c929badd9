import {
  deleteLetterJobOfRecording,
  findRecordingForLetter,
  isLetterJobQueued,
  listRecordingContext,
  letterJobLease,
  lockRecordingForLetter,
} from "~/models/letter-job.server";
import { listStyleExamples } from "~/models/letter.server";
import { getRagAgreed } from "~/models/template.server";
import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";
import { LETTER_ROLES, waitingForModels } from "../model-store/downloads.server";
import { classifyRun, settleRun } from "./regeneration-outcome.server";
import { letterLanguage, wake } from "./letters.server";
import { generateLetter } from "./generate.server";
import { sectionsOf, type LetterSection } from "./letter-content";
import { getLanguageModel } from "../llm/engine.server";
import { getUserStructure } from "../templates/templates.server";
import { getTranscript } from "../transcription/transcripts.server";
import { recordTokens } from "../admin/usage.server";

// A run of a letter job (letters/letters.server.ts creates them; ADR 0012): claimed under a lease that a heartbeat
// renews while the model writes, so a run whose worker died is queued again by the sweep, and a run whose job
// was deleted or reset stops. How a run ends is settled in letter-job-outcome.server.ts.

export const LETTER_LEASE_MS = 120_000;
const HEARTBEAT_MS = 30_000;
/** AI Learning: at most this many of the user's own letters go to the model as style examples. */
export const STYLE_EXAMPLES = 2;

const running = new Map<string, AbortController>();

/** One run of a letter job, as the worker calls it; safe to call twice (only one caller claims it). */
export async function runLetterJob(jobId: string): Promise<"completed" | "failed" | "retry" | "skipped" | "waiting"> {
  // The letter model is still downloading (issue 21): queued and unclaimed until it is there.
  if (getConfig().llm.engine === "local" && waitingForModels(LETTER_ROLES)) {
    if (!(await isLetterJobQueued(jobId))) return "skipped";
    await wake(jobId, { startAfterSeconds: 15 });
    return "waiting";
  }
  const job = await letterJobLease.claim(jobId, LETTER_LEASE_MS);
  if (!job) return "skipped";
  const controller = new AbortController();
  running.set(job.recording_id, controller);
  const heartbeat = setInterval(() => {
    letterJobLease.renew(job.id, job.attempts, LETTER_LEASE_MS).then(
      (held) => {
        if (!held) controller.abort(new Error("letter job was cancelled"));
      },
      (error) => console.warn("[letters] lease renewal failed:", (error as Error).message),
    );
  }, HEARTBEAT_MS);
  let language = "de-DE";
  let tags: string[] = [];
  try {
    const recording = await findRecordingForLetter(getDb(), { ownerId: job.owner_id, recordingId: job.recording_id });
    if (!recording) {
      // The transcript was deleted after the job was queued: a clear failure, not a job the sweep requeues forever.
      const verdict = {
        final: true,
        status: "failed" as const,
        errorKey: "letters:errors.transcriptMissing",
        detail: "transcript gone",
      };
      const settled = await settleRun(job, { ok: false, ...verdict }, language, tags);
      return settled ? "failed" : "skipped";
    }
    language = letterLanguage(recording.language_code);
    const { document, row } = await getTranscript({ userId: job.owner_id, key: recording.transcript_storage_key });
    tags = row.tags;
    const structure = await getUserStructure({
      userId: job.owner_id,
      templateId: job.template_id,
      language: letterLanguage(recording.language_code),
    });
    const context = await listRecordingContext({ ownerId: job.owner_id, recordingId: job.recording_id });
    const styleExamples = (await getRagAgreed({ userId: job.owner_id }))
      ? (
          await listStyleExamples({
            ownerId: job.owner_id,
            templateId: job.template_id,
            language,
            excludeRecordingId: job.recording_id,
            limit: STYLE_EXAMPLES,
          })
        )
          .map((example) => sectionsOf(example.content))
          .filter((sections): sections is LetterSection[] => Boolean(sections))
      : [];
    const model = getLanguageModel();
    const result = await generateLetter({
      model,
      language: letterLanguage(language),
      template: {
        name: structure.name,
        prompt: structure.prompt,
        elements: structure.elements.map((e) => ({ name: e.name, description: e.description })),
      },
      transcript: document,
      context: context.map((c) => ({ kind: c.kind, text: c.text, sourceName: c.source_name })),
      styleExamples,
      mode: job.kind === "redo" ? "redo" : "create",
      signal: controller.signal,
    });
    await recordTokens(job.owner_id, "medical-letter-v2", result.usage, model.name === "local");
    const saved = await settleRun(
      job,
      { ok: true, sections: result.sections, citations: result.citations, templateId: job.template_id },
      language,
      tags,
    );
    return saved ? "completed" : "skipped";
  } catch (error) {
    if (controller.signal.aborted) return "skipped";
    const verdict = classifyRun(error, job);
    console.warn(`[letters] job ${job.id} attempt ${job.attempts} failed:`, verdict.detail);
    const settled = await settleRun(job, { ok: false, ...verdict }, language, tags).catch((settleError) => {
      console.warn("[letters] could not record the failure:", (settleError as Error).message);
      return false;
    });
    if (!settled) return "skipped";
    if (!verdict.final) await wake(job.id, { startAfterSeconds: 15 * job.attempts });
    return verdict.final ? "failed" : "retry";
  } finally {
    running.delete(job.recording_id);
    clearInterval(heartbeat);
  }
}

/** Delete and reset call this first: a run in this process stops now, one elsewhere at its next renewal. */
export async function stopLetterJob(args: { userId: string; recordingId: string }) {
  running.get(args.recordingId)?.abort(new Error("letter job was cancelled"));
  await getDb()
    .transaction()
    .execute(async (trx) => {
      await lockRecordingForLetter(trx, { ownerId: args.userId, recordingId: args.recordingId });
      await deleteLetterJobOfRecording(trx, { ownerId: args.userId, recordingId: args.recordingId });
    });
}

/** The sweep: runs whose worker died are queued again, and lost wake-ups re-sent. */
export async function sweepLetterJobs(now = new Date()) {
  const lapsed = await letterJobLease.requeueLapsed(now);
  const waiting = await letterJobLease.listWaiting(new Date(now.getTime() - 2 * 60_000));
  const ids = new Set([...lapsed, ...waiting.map((w) => w.id)]);
  for (const id of ids) await wake(id);
  return { requeued: lapsed.length, resent: ids.size };
}
