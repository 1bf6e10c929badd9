import { randomUUID } from "node:crypto";
import type { Transaction } from "kysely";
import {
  claimLetterJob,
  deleteLetterJobOfRecording,
  findLetterJobOfRecording,
  findRecordingForLetter,
  finishLetterJob,
  listRecordingContext,
  listWaitingLetterJobs,
  lockRecordingForLetter,
  renewLetterLease,
  replaceLetterJob,
  requeueLapsedLetterJobs,
  setLetterStatus,
} from "~/models/letter-job.server";
import { appendVersion, findLetterOfRecording, insertLetter, listStyleExamples } from "~/models/letter.server";
import type { Database } from "~/models/schema";
import { getRagAgreed } from "~/models/template.server";
import { templateLanguageFrom, type TemplateLanguage } from "~/models/template-rules";
import { getConfig } from "./config.server";
import { getDb } from "./db.server";
import { DomainError } from "./domain-error.server";
import { sendWakeUp } from "./job-wakeup.server";
import { generateLetter } from "./letters/generate.server";
import { sectionsOf, toStructuredContent, type LetterSection } from "./letters/letter-content";
import { LetterGenerationError } from "./letters/letter-errors";
import { getLanguageModel } from "./llm/engine.server";
import { LlmError, type TokenUsage } from "./llm/types";
import { hitRateLimit } from "./rate-limit.server";
import { requireReady } from "./recordings.server";
import { makeStorageKey } from "./storage.server";
import { getUserStructure, listUserTemplates } from "./templates.server";
import { getTranscript } from "./transcription.server";
import { recordUsage } from "./usage.server";

// Letter generation (issue 6, ADR 0012). A recording has one current letter. Creating it, or redoing it with
// another template, is a letter job: one per recording, created in the transaction that flips the recording's
// letter status to "processing", so client retries and races find the job and start nothing new. The job row
// holds status, attempts and a lease (as transcription does); pg-boss only wakes a worker. Redo appends a
// version to the same letter: the earlier text stays as a version.

export const LETTER_QUEUE = "letter";
export const LETTER_LEASE_MS = 120_000;
const HEARTBEAT_MS = 30_000;
export const LETTER_MAX_ATTEMPTS = 3;
/** AI Learning: at most this many of the user's own letters go to the model as style examples. */
export const STYLE_EXAMPLES = 2;

type Tx = Transaction<Database>;

/** A recording's language as the letter's (SPEC §7 mapping: en → en-GB, anything else → de-DE). */
export function letterLanguage(code: string | null | undefined): TemplateLanguage {
  return templateLanguageFrom(code) ?? "de-DE";
}

function wake(jobId: string, options: { trx?: Tx; startAfterSeconds?: number } = {}) {
  return sendWakeUp(LETTER_QUEUE, jobId, { ...options, expireInSeconds: 60 * 60 });
}

/** The template a letter is written from: the one asked for, the recording's, or the user's first. */
async function resolveTemplateId(args: {
  userId: string;
  asked?: unknown;
  recordingTemplate: string | null;
  language: string;
}) {
  if (typeof args.asked === "string" && args.asked.trim()) return args.asked.trim();
  if (args.recordingTemplate) return args.recordingTemplate;
  const templates = await listUserTemplates({ userId: args.userId, language: letterLanguage(args.language) });
  const first = templates.system[0] ?? templates.custom[0];
  if (!first) throw new DomainError("invalid", "letters:errors.templateMissing");
  return first.id;
}

export type LetterRequest = {
  userId: string;
  sourceKey: unknown;
  /** "redo": a new letter from the stored transcript with another template; the current one becomes a version. */
  kind: "create" | "redo";
  templateId?: unknown;
  /** The server's own auto-creation: not counted against the user's rate limit. */
  auto?: boolean;
};

/** Per user and hour: each letter costs model time (and, with a paid API, money). */
export const LETTERS_PER_HOUR = 30;

/**
 * SPEC §7 medical-letter-v2 (create) and the redo flow. Idempotent: while a job is queued or running the same
 * job comes back; a create when the letter exists returns it. Nothing from the client's payload is trusted
 * beyond the recording's key and the template's id: the transcript is the stored one.
 */
export async function requestLetter(args: LetterRequest) {
  const recording = await requireReady(args.userId, args.sourceKey);
  if (!args.auto) {
    const verdict = await hitRateLimit({
      bucket: `letter:${args.userId}`,
      limit: LETTERS_PER_HOUR,
      windowSeconds: 3600,
    });
    if (!verdict.allowed) throw new DomainError("rate_limited", "letters:errors.tooManyRequests");
  }
  const templateId = await resolveTemplateId({
    userId: args.userId,
    asked: args.templateId,
    recordingTemplate: recording.template_id,
    language: recording.language_code,
  });
  // The template must be one this user can use (system, or their own custom one).
  await getUserStructure({ userId: args.userId, templateId, language: letterLanguage(recording.language_code) });
  const engine = getConfig().llm.engine;
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const locked = await lockRecordingForLetter(trx, { ownerId: args.userId, recordingId: recording.id });
      if (!locked) throw new DomainError("not_found", "recordings:errors.recordingNotFound");
      if (locked.transcription_status !== "completed" || !locked.transcript_key) {
        throw new DomainError("invalid", "letters:errors.transcriptMissing");
      }
      const job = await findLetterJobOfRecording(trx, { ownerId: args.userId, recordingId: recording.id });
      if (job && (job.status === "queued" || job.status === "running")) {
        return { job_name: job.job_name, status: "processing" as const, key: null };
      }
      const letter = await findLetterOfRecording(trx, { ownerId: args.userId, recordingId: recording.id });
      if (args.kind === "create" && letter) {
        return { job_name: job?.job_name ?? null, status: "completed" as const, key: letter.storage_key };
      }
      if (args.kind === "redo") {
        if (!letter) throw new DomainError("not_found", "letters:errors.letterNotFound");
        if (letter.template_id === templateId) throw new DomainError("invalid", "letters:errors.sameTemplate");
      }
      const jobName = `letter-${randomUUID()}`;
      const created = await replaceLetterJob(trx, {
        ownerId: args.userId,
        recordingId: recording.id,
        jobName,
        kind: args.kind,
        templateId,
        engine,
      });
      await setLetterStatus(trx, { ownerId: args.userId, recordingId: recording.id, status: "processing" });
      await wake(created.id, { trx });
      return { job_name: jobName, status: "processing" as const, key: letter?.storage_key ?? null };
    });
}

/**
 * The server-side auto-creation rule (ADR 0012): when a transcript completes for a recording in
 * "transcript plus Arztbrief" mode whose letter is still pending, the letter job starts. Never throws: a
 * failure leaves the letter "pending", and the list offers "Create letter".
 */
export async function autoCreateLetter(args: { userId: string; recordingId: string; sourceKey: string; mode: string }) {
  if (args.mode !== "transcript_and_letter") return null;
  try {
    return await requestLetter({ userId: args.userId, sourceKey: args.sourceKey, kind: "create", auto: true });
  } catch (error) {
    console.warn("[letters] auto-creation failed:", error instanceof Error ? error.message : error);
    return null;
  }
}

type Outcome =
  | { ok: true; sections: LetterSection[]; templateId: string }
  | { ok: false; final: boolean; errorKey: string; detail: string; status: "failed" | "structure_error" };

async function settle(
  job: {
    id: string;
    recording_id: string;
    owner_id: string;
    attempts: number;
    kind: "create" | "redo";
    template_id: string;
  },
  outcome: Outcome,
  language: string,
  tags: string[],
) {
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const recording = await lockRecordingForLetter(trx, { ownerId: job.owner_id, recordingId: job.recording_id });
      if (!recording) return false;
      if (!outcome.ok) {
        const finished = await finishLetterJob(trx, {
          id: job.id,
          attempt: job.attempts,
          status: outcome.final ? "failed" : "queued",
          errorKey: outcome.errorKey,
          errorDetail: outcome.detail,
        });
        if (finished && outcome.final) {
          // A failed redo leaves the letter as it was: its status is "completed" again.
          const status = job.kind === "redo" ? "completed" : outcome.status;
          await setLetterStatus(trx, { ownerId: job.owner_id, recordingId: job.recording_id, status });
        }
        return finished;
      }
      const finished = await finishLetterJob(trx, { id: job.id, attempt: job.attempts, status: "completed" });
      if (!finished) return false;
      const content = toStructuredContent(outcome.sections);
      const existing = await findLetterOfRecording(trx, { ownerId: job.owner_id, recordingId: job.recording_id });
      if (existing) {
        await appendVersion(trx, {
          letterId: existing.id,
          ownerId: job.owner_id,
          version: existing.current_version + 1,
          kind: job.kind === "redo" ? "redo" : "generated",
          authorId: job.owner_id,
          templateId: outcome.templateId,
          content,
        });
      } else {
        const key = makeStorageKey({ ownerId: job.owner_id, area: "arztbriefe", extension: ".json" });
        const letter = await insertLetter(trx, {
          ownerId: job.owner_id,
          recordingId: job.recording_id,
          key,
          templateId: outcome.templateId,
          language,
          tags,
        });
        if (!letter) throw new Error("letter row could not be created");
        await appendVersion(trx, {
          letterId: letter.id,
          ownerId: job.owner_id,
          version: 1,
          kind: "generated",
          authorId: job.owner_id,
          templateId: outcome.templateId,
          content,
        });
      }
      await setLetterStatus(trx, {
        ownerId: job.owner_id,
        recordingId: job.recording_id,
        status: "completed",
        templateId: outcome.templateId,
      });
      return true;
    });
}

export async function recordTokens(userId: string, endpoint: string, usage: TokenUsage, local: boolean) {
  const prices = getConfig().prices;
  await recordUsage({
    userId,
    endpoint,
    units: usage.promptTokens,
    unit: "input_token",
    unitPriceUsd: local ? 0 : prices.llmInputPer1kTokensUsd / 1000,
  });
  await recordUsage({
    userId,
    endpoint,
    units: usage.completionTokens,
    unit: "output_token",
    unitPriceUsd: local ? 0 : prices.llmOutputPer1kTokensUsd / 1000,
  });
}

/** What a failure means for the job: retried, or final with the key a clinician sees. */
function classify(error: unknown, job: { attempts: number; kind: "create" | "redo" }) {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof LetterGenerationError) {
    const switchFailed = job.kind === "redo";
    if (error.code === "not_patient_conversation" || error.code === "template_switch_failed") {
      return {
        final: true,
        status: "failed" as const,
        errorKey: switchFailed ? "letters:errors.templateSwitchFailed" : "letters:errors.notPatientConversation",
        detail,
      };
    }
    return {
      final: true,
      status: "structure_error" as const,
      errorKey: switchFailed ? "letters:errors.templateSwitchFailed" : error.userMessageKey,
      detail,
    };
  }
  if (error instanceof LlmError) {
    if (error.kind === "invalid_output") {
      return { final: true, status: "structure_error" as const, errorKey: "letters:errors.invalidStructure", detail };
    }
    if (error.kind === "not_configured") {
      return {
        final: true,
        status: "failed" as const,
        errorKey: error.options.userMessageKey ?? "letters:errors.modelMissing",
        detail,
      };
    }
    const final = error.kind === "permanent" || job.attempts >= LETTER_MAX_ATTEMPTS;
    return {
      final,
      status: "failed" as const,
      errorKey: job.kind === "redo" ? "letters:errors.redoFailed" : "letters:errors.creationFailed",
      detail,
    };
  }
  // Unknown failures (storage, database) are retried like transient ones, within the same bound.
  return {
    final: job.attempts >= LETTER_MAX_ATTEMPTS,
    status: "failed" as const,
    errorKey: job.kind === "redo" ? "letters:errors.redoFailed" : "letters:errors.creationFailed",
    detail,
  };
}

const running = new Map<string, AbortController>();

/** One run of a letter job, as the worker calls it; safe to call twice (only one caller claims it). */
export async function runLetterJob(jobId: string): Promise<"completed" | "failed" | "retry" | "skipped"> {
  const job = await claimLetterJob(jobId, LETTER_LEASE_MS);
  if (!job) return "skipped";
  const controller = new AbortController();
  running.set(job.recording_id, controller);
  const heartbeat = setInterval(() => {
    renewLetterLease(job.id, job.attempts, LETTER_LEASE_MS).then(
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
      const settled = await settle(job, { ok: false, ...verdict }, language, tags);
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
      mode: job.kind,
      signal: controller.signal,
    });
    await recordTokens(job.owner_id, "medical-letter-v2", result.usage, model.name === "local");
    const saved = await settle(
      job,
      { ok: true, sections: result.sections, templateId: job.template_id },
      language,
      tags,
    );
    return saved ? "completed" : "skipped";
  } catch (error) {
    if (controller.signal.aborted) return "skipped";
    const verdict = classify(error, job);
    console.warn(`[letters] job ${job.id} attempt ${job.attempts} failed:`, verdict.detail);
    const settled = await settle(job, { ok: false, ...verdict }, language, tags).catch((settleError) => {
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
  const lapsed = await requeueLapsedLetterJobs(now);
  const waiting = await listWaitingLetterJobs(new Date(now.getTime() - 2 * 60_000));
  const ids = new Set([...lapsed, ...waiting.map((w) => w.id)]);
  for (const id of ids) await wake(id);
  return { requeued: lapsed.length, resent: ids.size };
}
