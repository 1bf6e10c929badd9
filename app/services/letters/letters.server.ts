import { randomUUID } from "node:crypto";
import type { Transaction } from "kysely";
import {
  findLetterJobOfRecording,
  lockRecordingForLetter,
  replaceLetterJob,
  setLetterStatus,
} from "~/models/letter-job.server";
import { findLetterOfRecording } from "~/models/letter.server";
import type { Database } from "~/models/schema";
import { templateLanguageFrom, type TemplateLanguage } from "~/models/template-rules";
import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { sendWakeUp } from "../jobs/queue.server";
import { hitRateLimit } from "../web/rate-limit.server";
import { requireReady } from "../recordings/recordings.server";
import { getUserStructure, listUserTemplates } from "../templates/templates.server";

// Letter generation (issue 6, ADR 0012). A recording has one current letter. Creating it, or redoing it with
// another template, is a letter job: one per recording, created in the transaction that flips the recording's
// letter status to "processing", so client retries and races find the job and start nothing new. The job row
// holds status, attempts and a lease (as transcription does); pg-boss only wakes a worker. The job runs in
// letter-job.server.ts.

export const LETTER_QUEUE = "letter";

type Tx = Transaction<Database>;

/** A recording's language as the letter's (SPEC §7 mapping: en → en-GB, anything else → de-DE). */
export function letterLanguage(code: string | null | undefined): TemplateLanguage {
  return templateLanguageFrom(code) ?? "de-DE";
}

export function wake(jobId: string, options: { trx?: Tx; startAfterSeconds?: number } = {}) {
  return sendWakeUp(LETTER_QUEUE, jobId, { ...options, expireInSeconds: 60 * 60 });
}

/** The template a letter is written from: the one asked for, the recording's, or the user's first. */
async function resolveTemplateId(args: {
  userId: string;
  asked?: string;
  recordingTemplate: string | null;
  language: string;
}) {
  if (args.asked?.trim()) return args.asked.trim();
  if (args.recordingTemplate) return args.recordingTemplate;
  const templates = await listUserTemplates({ userId: args.userId, language: letterLanguage(args.language) });
  const first = templates.system[0] ?? templates.custom[0];
  if (!first) throw new DomainError("invalid", "letters:errors.templateMissing");
  return first.id;
}

export type LetterRequest = {
  userId: string;
  sourceKey: string;
  /** "redo": a new letter from the stored transcript with another template; the current one becomes a version. */
  kind: "create" | "redo";
  templateId?: string;
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
      userId: args.userId,
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
