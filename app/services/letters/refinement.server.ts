import { appendVersion, decideProposal, findProposal, insertProposal } from "~/models/letter.server";
import type { StoredLetterContent } from "~/models/schema";
import { optionalText } from "../web/api-fields.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { changeLockedLetter, letterKeyFrom, requireLetter, sectionsFor } from "./editing.server";
import { letterLanguage } from "./letters.server";
import {
  diffSections,
  letterPlainText,
  sectionsOf,
  toStructuredContent,
  type LetterLanguage,
  type LetterSection,
} from "./letter-content";
import { LetterGenerationError, RefineError } from "./letter-errors";
import {
  checkInstruction as checkRefineInstruction,
  refineSections as refineSectionsWith,
  refineText as refineTextWith,
} from "./refine.server";
import { getLanguageModel } from "../llm/engine.server";
import { LlmError, type TokenUsage } from "../llm/types";
import { hitRateLimit } from "../web/rate-limit.server";
import { getTranscript } from "../transcription/transcripts.server";
import { meterCall, recordTokens } from "../admin/usage.server";

// Refining letters (issue 6): in the editor a refinement is a proposal (letter_proposals) that becomes a version
// only when the doctor accepts it, and only if the letter has not changed since; the SPEC §7 calls
// refine-arztbrief-structured|bulk are stateless and save nothing. Both are rate-limited per user and write their
// tokens to the usage table.

export { MAX_INSTRUCTION_CHARS } from "./refine.server";
/** Per user and hour: refinement costs money and model time. */
export const REFINEMENTS_PER_HOUR = 60;

async function refinementAllowed(userId: string) {
  const verdict = await hitRateLimit({
    bucket: `refine:${userId}`,
    limit: REFINEMENTS_PER_HOUR,
    windowSeconds: 3600,
    userId,
  });
  if (!verdict.allowed) throw new DomainError("rate_limited", "letters:errors.tooManyRequests");
}

/**
 * The doctor's instruction, checked at the door: required, at most 500 characters (refine.server.ts's rule), a
 * translated error. The JSON calls refuse another type than text with the same "required" message first.
 */
export function instructionFrom(query: string) {
  try {
    return checkRefineInstruction(query);
  } catch (error) {
    return asDomainError(error);
  }
}

async function transcriptText(userId: string, transcriptKey: string | null) {
  if (!transcriptKey) return undefined;
  try {
    const { document } = await getTranscript({ userId, key: transcriptKey });
    return document.formatted_transcript;
  } catch {
    return undefined;
  }
}

async function charge(userId: string, endpoint: string, usage: TokenUsage | undefined) {
  if (!usage) return;
  await recordTokens(userId, endpoint, usage, getLanguageModel().name === "local");
}

/** Expected refinement failures become translated messages; nothing is saved when a refinement fails. */
function asDomainError(error: unknown): never {
  if (error instanceof RefineError) throw new DomainError("invalid", error.userMessageKey);
  if (error instanceof LetterGenerationError) throw new DomainError("unavailable", "letters:errors.updateFailed");
  if (error instanceof LlmError) {
    if (error.kind === "not_configured") {
      throw new DomainError("unavailable", error.options.userMessageKey ?? "letters:errors.engineNotConfigured");
    }
    console.warn("[letters] refinement failed:", error.message);
    throw new DomainError("unavailable", "letters:errors.updateFailed");
  }
  throw error;
}

const refineText = (options: Parameters<typeof refineTextWith>[0]) => refineTextWith(options).catch(asDomainError);
const refineSections = (options: Parameters<typeof refineSectionsWith>[0]) =>
  refineSectionsWith(options).catch(asDomainError);

export type RefineScope = { kind: "all" } | { kind: "full_text" } | { kind: "section"; title: string };

/** Parses the editor's section selector: "__all__", "__full__" or a section title of the letter. */
export function scopeFrom(value: string, sections: LetterSection[] | null): RefineScope {
  if (value === "__full__" || !sections) return { kind: "full_text" };
  if (value === "__all__" || value === "") return { kind: "all" };
  const title = value;
  if (!sections.some((s) => s.title === title)) throw new DomainError("invalid", "letters:errors.sectionNotFound");
  return { kind: "section", title };
}

/**
 * A refinement of the current letter as a proposal (not yet a version): 'All Sections' refines every section
 * in one call, one section only that section, 'Full text only' the whole text as one. `query` is the instruction
 * as instructionFrom checked it at the door; `scope` the editor's selector, read against the letter's sections.
 */
export async function proposeRefinement(args: { userId: string; key: string; scope: string; query: string }) {
  const query = args.query;
  const letter = await requireLetter(args.userId, args.key);
  const sections = sectionsOf(letter.content);
  const scope = scopeFrom(args.scope, sections);
  const endpoint = scope.kind === "all" ? "refine-arztbrief-bulk" : "refine-arztbrief-structured";
  // The editor's refinement is a screen action: one call, as the JSON door counts its own (admin/usage.server.ts).
  meterCall(args.userId, endpoint);
  await refinementAllowed(args.userId);
  const model = getLanguageModel();
  const language = letterLanguage(letter.language_code);
  const transcript = await transcriptText(args.userId, letter.transcript_key);
  let proposed: StoredLetterContent;
  let usage: TokenUsage | undefined;
  if (scope.kind === "all" && sections) {
    const result = await refineSections({ model, language, sections, query, transcript });
    proposed = toStructuredContent(result.sections);
    usage = result.usage;
  } else if (scope.kind === "section" && sections) {
    const section = sections.find((s) => s.title === scope.title)!;
    const result = await refineText({
      model,
      language,
      text: section.text,
      query,
      sectionTitle: section.title,
      transcript,
    });
    proposed = toStructuredContent(sections.map((s) => (s.title === scope.title ? { ...s, text: result.text } : s)));
    usage = result.usage;
  } else {
    const text = sections ? letterPlainText(letter.content, { omitNoInformation: false }) : String(letter.content);
    const result = await refineText({ model, language, text, query, transcript });
    proposed = result.text;
    usage = result.usage;
  }
  await charge(args.userId, endpoint, usage);
  const row = await insertProposal({
    ownerId: args.userId,
    letterId: letter.id,
    baseVersion: letter.current_version,
    scope: scope.kind,
    sectionTitle: scope.kind === "section" ? scope.title : null,
    query,
    content: proposed,
  });
  return { id: row.id };
}

export async function getProposal(args: { userId: string; key: string; id: string }) {
  const letter = await requireLetter(args.userId, args.key);
  // Not an id at all is a proposal that does not exist, after the letter's own refusal.
  if (!/^[0-9a-f-]{36}$/i.test(args.id)) {
    throw new DomainError("not_found", "letters:errors.proposalNotFound");
  }
  const proposal = await findProposal(getDb(), { ownerId: args.userId, letterId: letter.id, id: args.id });
  if (!proposal) throw new DomainError("not_found", "letters:errors.proposalNotFound");
  return {
    ...proposal,
    stale: proposal.base_version !== letter.current_version,
    changes: diffSections(sectionsFor(letter.content), sectionsFor(proposal.content)),
  };
}

/** Accepting makes the proposal the current version; a stale proposal (the letter changed) is refused. */
export async function decideRefinement(args: { userId: string; key: string; id: string; accept: boolean }) {
  const proposal = await getProposal(args);
  if (proposal.status !== "open") throw new DomainError("conflict", "letters:errors.proposalDecided");
  const key = letterKeyFrom(args.key);
  return changeLockedLetter(args.userId, key, async (trx, letter) => {
    if (!args.accept) {
      await decideProposal(trx, { ownerId: args.userId, id: proposal.id, status: "rejected" });
      return { accepted: false, version: letter.current_version };
    }
    if (proposal.base_version !== letter.current_version) {
      throw new DomainError("conflict", "letters:errors.changedMeanwhile");
    }
    const decided = await decideProposal(trx, { ownerId: args.userId, id: proposal.id, status: "accepted" });
    if (!decided) throw new DomainError("conflict", "letters:errors.proposalDecided");
    await appendVersion(trx, {
      letterId: letter.id,
      ownerId: args.userId,
      version: letter.current_version + 1,
      kind: "refined",
      authorId: args.userId,
      templateId: null,
      content: proposal.content,
      note: proposal.query,
    });
    return { accepted: true, version: letter.current_version + 1 };
  });
}

/** The JSON call's language_code: text or absent (then German), never another type read as German. */
export function refinementLanguageFrom(body: Record<string, unknown>) {
  return letterLanguage(optionalText(body, "language_code") ?? "de-DE");
}

/** The JSON call's transcript_data, as facts for the model: its text (a string, or the formatted/raw one), or none. */
export function clientTranscriptFrom(value: unknown) {
  if (typeof value === "string") return value.slice(0, 400_000);
  if (value && typeof value === "object") {
    const raw =
      (value as { raw_transcript?: unknown; formatted_transcript?: unknown }).formatted_transcript ??
      (value as { raw_transcript?: unknown }).raw_transcript;
    if (typeof raw === "string") return raw.slice(0, 400_000);
  }
  return undefined;
}

type RefineCall = {
  userId: string;
  /** Checked at the door (instructionFrom). */
  query: string;
  language: LetterLanguage;
  transcript: string | undefined;
};

/**
 * SPEC §7 POST /api/refine-arztbrief-structured → { refined_arztbrief }. Stateless: the text is the caller's, not
 * blank; `sectionTitle` the section it is, if the caller said.
 */
export async function refineStructuredCall(args: RefineCall & { text: string; sectionTitle: string | undefined }) {
  await refinementAllowed(args.userId);
  const model = getLanguageModel();
  const result = await refineText({
    model,
    language: args.language,
    text: args.text,
    query: args.query,
    sectionTitle: args.sectionTitle,
    transcript: args.transcript,
  });
  await charge(args.userId, "refine-arztbrief-structured", result.usage);
  return { refined_arztbrief: result.text };
}

/**
 * The bulk call's arztbrief_content: its sections, from `{ structured_output: [...] }` or the bare list, and whether
 * it came as the list (the answer keeps the shape). Anything else, or no section, is invalid content.
 */
export function bulkSectionsFrom(given: unknown): { sections: LetterSection[]; asList: boolean } {
  const asList = Array.isArray(given);
  const sections = sectionsOf(asList ? { structured_output: given } : given);
  if (!sections || sections.length === 0)
    throw new DomainError("invalid", "letters:errors.invalidContent", [], { reason: "structured_output" });
  return { sections, asList };
}

/** SPEC §7 POST /api/refine-arztbrief-bulk → { refined_content }, in the shape it was given. */
export async function refineBulkCall(args: RefineCall & { sections: LetterSection[]; asList: boolean }) {
  await refinementAllowed(args.userId);
  const model = getLanguageModel();
  const result = await refineSections({
    model,
    language: args.language,
    sections: args.sections,
    query: args.query,
    transcript: args.transcript,
  });
  await charge(args.userId, "refine-arztbrief-bulk", result.usage);
  const content = toStructuredContent(result.sections);
  return { refined_content: args.asList ? content.structured_output : content };
}
