import { findLetterJobOfRecording } from "~/models/letter-job.server";
import type { LetterStatus } from "~/models/schema";
import { auditRecording } from "~/services/audit/events.server";
import { notFound } from "~/services/web/not-found.server";
import { getDb } from "~/models/db.server";
import { DomainError } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { requestLetter } from "~/services/letters/letters.server";
import type { SessionUser } from "~/services/web/session.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { meterCall } from "~/services/admin/usage.server";
import type { LetterStatusView } from "./letter-status";

// The letter state of recordings for the Transcriptions screens, and their "Create letter" action (SPEC §2, §4).

type RecordingLetter = { id: string; medical_letter_status: LetterStatus };

/** Why the letters of failed recordings failed: the letter job keeps the reason as an i18n key. */
export async function letterFailures(ownerId: string, recordings: RecordingLetter[]) {
  const failed = recordings.filter(
    (r) => r.medical_letter_status === "failed" || r.medical_letter_status === "structure_error",
  );
  const reasons = await Promise.all(
    failed.map(async (r) => {
      const job = await findLetterJobOfRecording(getDb(), { ownerId, recordingId: r.id });
      return [r.id, job?.error_key ?? null] as const;
    }),
  );
  return new Map(reasons);
}

export function letterStatusOf(recording: RecordingLetter, failures: Map<string, string | null>): LetterStatusView {
  return {
    status: recording.medical_letter_status,
    processing: recording.medical_letter_status === "processing",
    errorKey: failures.get(recording.id) ?? null,
  };
}

/** SPEC §4: "Create letter" is disabled while processing and once the letter exists. */
export function canCreateLetter(status: LetterStatus) {
  return status !== "processing" && status !== "completed";
}

/**
 * The Transcriptions screens' "Create letter" / "Create document": starts the letter job (idempotent: a second
 * click while it runs, or once the letter exists, starts nothing) and says so in a toast. Expected failures
 * (no transcript, too many requests, no template) come back translated, never as a 500.
 */
export async function createLetterIntent(args: {
  user: SessionUser;
  sourceKey: string;
  request: Request;
  redirectTo: string;
}) {
  const created = (outcome: "success" | "failure") =>
    auditRecording(args.request, args.user.id, "letter.create", args.sourceKey, outcome);
  meterCall(args.user.id, "medical-letter-v2");
  try {
    const result = await requestLetter({ userId: args.user.id, sourceKey: args.sourceKey, kind: "create" });
    await created("success");
    const key = result.status === "completed" ? "letters:toast.exists" : "letters:toast.creating";
    return redirectWithToast(args.redirectTo, { type: "success", key });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await created("failure");
    if (error.message === "recordings:errors.recordingNotFound") notFound();
    const t = await getFixedTFor(await getLanguage(args.request), ["common", "recordings", "letters"]);
    return redirectWithToast(args.redirectTo, {
      type: "error",
      key: "letters:toast.createFailed",
      values: { reason: t(error.message, error.values).slice(0, 200) },
    });
  }
}
