import { randomUUID } from "node:crypto";
import {
  findLetterJobOfRecording,
  findLetterJobState,
  lockRecordingForLetter,
  replaceLetterJob,
  setLetterStatus,
} from "~/models/letter-job.server";
import { findLetterOfRecording } from "~/models/letter.server";
import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { hitRateLimit } from "../web/rate-limit.server";
import { getUserStructure } from "../templates/templates.server";
import { getLetter, requireLetter } from "./editing.server";
import { letterLanguage, LETTERS_PER_HOUR, wake } from "./letters.server";
import { sectionsOf } from "./letter-content";

// Regenerating a letter from its corrected transcript (issue 24, ADR 0032): the whole letter or one section is
// written again from the transcript as it reads now (transcripts.server's getTranscript applies the doctor's
// corrections and speaker names), with the letter's template and the recording's context. It runs as a letter job of
// kind "regenerate" (job.server.ts) whose outcome is a proposal, never a version (regeneration-outcome.server.ts): the
// doctor's text stays as it is until they accept. While it runs the letter is busy, as during a redo.

export type RegenerationScope = { kind: "all" } | { kind: "section"; title: string };

/** The editor's section selector and the JSON call's fields, read against the letter's sections. */
export function regenerationScopeFrom(value: string | undefined, sections: { title: string }[] | null) {
  if (value === undefined || value === "" || value === "__all__") return { kind: "all" } as const;
  if (!sections?.some((s) => s.title === value)) throw new DomainError("invalid", "letters:errors.sectionNotFound");
  return { kind: "section", title: value } as const;
}

/** The proposal's line, in the language of `t` (the door's reader): it says where the proposal came from. */
export function regenerationQuery(t: (key: string, values?: Record<string, string>) => string) {
  return (scope: RegenerationScope) =>
    scope.kind === "all"
      ? t("letters:regenerate.queryAll")
      : t("letters:regenerate.querySection", { section: scope.title });
}

/** Why a regeneration cannot start, as redo's rules say (SPEC §4): the template and the transcript must be known. */
function problemOf(letter: Awaited<ReturnType<typeof getLetter>>) {
  if (!letter.metadata.template_id) return new DomainError("invalid", "letters:errors.templateMissing");
  if (!letter.transcript_key || !letter.recording_id)
    return new DomainError("invalid", "letters:errors.sourceNotFound");
  if (letter.status === "processing") return new DomainError("conflict", "letters:errors.busy");
  return null;
}

/**
 * Starts the regeneration of a user's letter. `query` is the proposal's line in the caller's language (the door
 * translates it). The base version is the letter's version now: a letter changed before the proposal is decided
 * makes it stale, as any refinement's.
 */
export async function requestRegeneration(args: {
  userId: string;
  key: string;
  scope: RegenerationScope;
  query: (scope: RegenerationScope) => string;
}) {
  const letter = await getLetter({ userId: args.userId, key: args.key });
  const problem = problemOf(letter);
  if (problem) throw problem;
  const templateId = letter.metadata.template_id!;
  const recordingId = letter.recording_id!;
  const { scope } = args;
  if (scope.kind === "section" && !sectionsOf(letter.content)?.some((s) => s.title === scope.title))
    throw new DomainError("invalid", "letters:errors.sectionNotFound");
  // The template must still be one this user can use, and still have the section asked for.
  const structure = await getUserStructure({
    userId: args.userId,
    templateId,
    language: letterLanguage(letter.language_code),
  }).catch((error: unknown) => {
    if (error instanceof DomainError && error.kind === "not_found")
      throw new DomainError("invalid", "letters:errors.templateMissing");
    throw error;
  });
  if (scope.kind === "section" && !structure.elements.some((e) => e.name.trim() === scope.title))
    throw new DomainError("invalid", "letters:errors.regenerateSectionNotInTemplate");
  // A regeneration costs what a letter costs: it counts against the same hourly budget.
  const verdict = await hitRateLimit({
    bucket: `letter:${args.userId}`,
    limit: LETTERS_PER_HOUR,
    windowSeconds: 3600,
    userId: args.userId,
  });
  if (!verdict.allowed) throw new DomainError("rate_limited", "letters:errors.tooManyRequests");
  const query = args.query(scope);
  const engine = getConfig().llm.engine;
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const ids = { ownerId: args.userId, recordingId };
      const locked = await lockRecordingForLetter(trx, ids);
      if (!locked) throw new DomainError("not_found", "letters:errors.letterNotFound");
      if (locked.transcription_status !== "completed" || !locked.transcript_key)
        throw new DomainError("invalid", "letters:errors.sourceNotFound");
      const running = await findLetterJobOfRecording(trx, ids);
      if (
        locked.medical_letter_status === "processing" ||
        running?.status === "queued" ||
        running?.status === "running"
      )
        throw new DomainError("conflict", "letters:errors.busy");
      const current = await findLetterOfRecording(trx, ids);
      if (!current) throw new DomainError("not_found", "letters:errors.letterNotFound");
      const jobName = `letter-${randomUUID()}`;
      const created = await replaceLetterJob(trx, {
        ...ids,
        jobName,
        kind: "regenerate",
        templateId,
        engine,
        regeneration: {
          scope: scope.kind,
          sectionTitle: scope.kind === "section" ? scope.title : null,
          baseVersion: current.current_version,
          query,
        },
      });
      await setLetterStatus(trx, { ...ids, status: "processing" });
      await wake(created.id, { trx });
      return { key: current.storage_key, jobName, baseVersion: current.current_version };
    });
}

export type RegenerationState =
  | { state: "none" }
  | { state: "processing"; jobName: string; scope: "all" | "section"; section: string | null; baseVersion: number }
  | {
      state: "failed";
      jobName: string;
      scope: "all" | "section";
      section: string | null;
      baseVersion: number;
      /** Why, as an i18n key. */
      errorKey: string;
    }
  | {
      state: "completed";
      jobName: string;
      scope: "all" | "section";
      section: string | null;
      baseVersion: number;
      proposalId: string | null;
      proposalStatus: "open" | "accepted" | "rejected" | null;
      /** The letter changed since the regeneration started: the proposal can only be rejected. */
      stale: boolean;
    };

/** The letter's last regeneration, if its last letter job was one. */
export async function regenerationState(args: { userId: string; key: string }): Promise<RegenerationState> {
  const letter = await requireLetter(args.userId, args.key);
  return regenerationOf(args.userId, letter);
}

/** As regenerationState, for a letter the caller has loaded for this user already. */
export async function regenerationOf(
  userId: string,
  letter: { recording_id: string | null; current_version: number },
): Promise<RegenerationState> {
  if (!letter.recording_id) return { state: "none" };
  const job = await findLetterJobState(getDb(), { ownerId: userId, recordingId: letter.recording_id });
  if (!job || job.kind !== "regenerate" || !job.scope || job.base_version === null) return { state: "none" };
  const common = {
    jobName: job.job_name,
    scope: job.scope,
    section: job.section_title,
    baseVersion: job.base_version,
  };
  if (job.status === "queued" || job.status === "running") return { state: "processing", ...common };
  if (job.status === "failed")
    return { state: "failed", ...common, errorKey: job.error_key ?? "letters:errors.regenerateFailed" };
  return {
    state: "completed",
    ...common,
    proposalId: job.proposal_id,
    proposalStatus: job.proposal_status ?? null,
    stale: job.base_version !== letter.current_version,
  };
}
