import {
  letterJobLease,
  lockRecordingForLetter,
  setLetterJobProposal,
  setLetterStatus,
} from "~/models/letter-job.server";
import { recordCitations } from "~/models/letter-citation.server";
import { findLetterOfRecording, getVersion, insertProposal } from "~/models/letter.server";
import type { LetterJobKind, StoredLetterContent } from "~/models/schema";
import { getDb } from "../../models/db.server";
import { auditLetter } from "../audit/events.server";
import { citedWordings } from "./citations";
import { classify, settle, type Outcome } from "./job-outcome.server";
import { sectionsOf, toStructuredContent, type LetterSection } from "./letter-content";

// How a run of a letter job ends, whatever its kind: create and redo as job-outcome.server.ts settles them; a
// regeneration (ADR 0032) as a proposal. A regeneration never writes a version: its outcome is a letter_proposals row
// on the version the regeneration started from, linked from the job, and the letter's status back to "completed" — on
// failure too, so the letter keeps its content and the doctor reads the job's error.

const REGENERATE_FAILED = "letters:errors.regenerateFailed";

type SettledJob = Parameters<typeof settle>[0];

/** A claimed letter job as job.server.ts runs it. */
export type RunJob = Omit<SettledJob, "kind"> & {
  kind: LetterJobKind;
  scope: "all" | "section" | null;
  section_title: string | null;
  base_version: number | null;
  query: string | null;
};

export function settleRun(job: RunJob, outcome: Outcome, language: string, tags: string[]) {
  if (job.kind === "regenerate") return settleRegeneration(job, outcome);
  return settle({ ...job, kind: job.kind }, outcome, language, tags);
}

/** As job-outcome's classify; a regeneration's generic failure says that the letter is unchanged. */
export function classifyRun(error: unknown, job: { attempts: number; kind: LetterJobKind }) {
  if (job.kind !== "regenerate") return classify(error, { attempts: job.attempts, kind: job.kind });
  const verdict = classify(error, { attempts: job.attempts, kind: "create" });
  return verdict.errorKey === "letters:errors.creationFailed" ? { ...verdict, errorKey: REGENERATE_FAILED } : verdict;
}

/**
 * The proposal's content: every section as generated (scope "all"), or the base version with only the asked section
 * replaced by the generated one (scope "section"); null when the section is in one of them no longer.
 */
export function proposedContent(
  job: Pick<RunJob, "scope" | "section_title">,
  base: StoredLetterContent,
  generated: LetterSection[],
): StoredLetterContent | null {
  if (job.scope !== "section") return toStructuredContent(generated);
  const title = job.section_title;
  const fresh = generated.find((s) => s.title === title);
  const sections = sectionsOf(base);
  if (!fresh || !sections?.some((s) => s.title === title)) return null;
  return toStructuredContent(sections.map((s) => (s.title === title ? { ...s, text: fresh.text } : s)));
}

async function settleRegeneration(job: RunJob, outcome: Outcome) {
  const ids = { ownerId: job.owner_id, recordingId: job.recording_id };
  const settled = await getDb()
    .transaction()
    .execute(async (trx) => {
      const recording = await lockRecordingForLetter(trx, ids);
      if (!recording) return null;
      const letter = await findLetterOfRecording(trx, ids);
      const fail = async (failure: { final: boolean; errorKey: string; detail: string }) => {
        const finished = await letterJobLease.finishFailed(trx, job, failure);
        if (!finished) return null;
        // The letter is as it was: its status too (a letter that exists is "completed").
        if (failure.final) await setLetterStatus(trx, { ...ids, status: letter ? "completed" : "pending" });
        return { outcome: failure.final ? ("failure" as const) : null, key: letter?.storage_key };
      };
      if (!outcome.ok) return fail(outcome);
      if (!letter) return fail({ final: true, errorKey: "letters:errors.letterNotFound", detail: "letter gone" });
      const base =
        job.base_version === null
          ? undefined
          : await getVersion(trx, { ownerId: job.owner_id, letterId: letter.id, version: job.base_version });
      const content = base ? proposedContent(job, base.content, outcome.sections) : null;
      if (!content)
        return fail({
          final: true,
          errorKey: "letters:errors.regenerateSectionNotInTemplate",
          detail: "section not in the letter or the template",
        });
      const finished = await letterJobLease.finish(trx, { id: job.id, attempt: job.attempts, status: "completed" });
      if (!finished) return null;
      const proposal = await insertProposal(
        {
          ownerId: job.owner_id,
          letterId: letter.id,
          baseVersion: job.base_version!,
          scope: job.scope === "section" ? "section" : "all",
          sectionTitle: job.scope === "section" ? job.section_title : null,
          query: job.query ?? "",
          content,
        },
        trx,
      );
      await setLetterJobProposal(trx, { ownerId: job.owner_id, jobId: job.id, proposalId: proposal.id });
      // The proposal's wordings are the model's: their sources go with them, of the asked section only.
      const cited = outcome.citations.filter(
        (c) => job.scope !== "section" || outcome.sections[c.section]?.title === job.section_title,
      );
      await recordCitations(trx, { ownerId: job.owner_id, letterId: letter.id, citations: citedWordings(cited) });
      await setLetterStatus(trx, { ...ids, status: "completed" });
      return { outcome: "success" as const, key: letter.storage_key };
    });
  // Who, when and which letter; never the text (STYLE.md §16). A run that will be retried is not an outcome yet.
  if (settled?.outcome)
    await auditLetter(undefined, job.owner_id, "letter.regenerate.done", settled.key, settled.outcome);
  return settled !== null;
}
