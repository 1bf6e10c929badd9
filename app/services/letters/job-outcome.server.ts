import { letterJobLease, lockRecordingForLetter, setLetterStatus } from "~/models/letter-job.server";
import { recordCitations } from "~/models/letter-citation.server";
import { appendVersion, findLetterOfRecording, insertLetter } from "~/models/letter.server";
import { getDb } from "../../models/db.server";
import { citedWordings } from "./citations";
import { toStructuredContent, type LetterSection } from "./letter-content";
import { LetterGenerationError } from "./letter-errors";
import type { CitedItem } from "./letter-schema";
import { LlmError } from "../llm/types";
import { makeStorageKey } from "../storage/storage.server";

// How a run of a letter job ends (letter-job.server.ts runs it): a failure is classified as retried or final,
// with the key a clinician sees, and the outcome is stored with the recording's letter status in one
// transaction. Redo appends a version to the same letter: the earlier text stays as a version.

export const LETTER_MAX_ATTEMPTS = 3;

export type Outcome =
  | { ok: true; sections: LetterSection[]; templateId: string; citations: CitedItem[] }
  | { ok: false; final: boolean; errorKey: string; detail: string; status: "failed" | "structure_error" };

export async function settle(
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
        const finished = await letterJobLease.finishFailed(trx, job, outcome);
        if (finished && outcome.final) {
          // A failed redo leaves the letter as it was: its status is "completed" again.
          const status = job.kind === "redo" ? "completed" : outcome.status;
          await setLetterStatus(trx, { ownerId: job.owner_id, recordingId: job.recording_id, status });
        }
        return finished;
      }
      const finished = await letterJobLease.finish(trx, { id: job.id, attempt: job.attempts, status: "completed" });
      if (!finished) return false;
      const content = toStructuredContent(outcome.sections);
      const existing = await findLetterOfRecording(trx, { ownerId: job.owner_id, recordingId: job.recording_id });
      let letterId: string;
      if (existing) {
        letterId = existing.id;
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
        letterId = letter.id;
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
      const citations = citedWordings(outcome.citations);
      await recordCitations(trx, { ownerId: job.owner_id, letterId, citations });
      await setLetterStatus(trx, {
        ownerId: job.owner_id,
        recordingId: job.recording_id,
        status: "completed",
        templateId: outcome.templateId,
      });
      return true;
    });
}

/** What a failure means for the job: retried, or final with the key a clinician sees. */
export function classify(error: unknown, job: { attempts: number; kind: "create" | "redo" }) {
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
