import {
  appendVersion,
  decideProposal,
  deleteLetterJobOfRecording,
  deleteLetterRow,
  findLetterByKey,
  findLetterJobOfRecording,
  findProposal,
  getVersion,
  insertProposal,
  listLettersOfOwner,
  listVersions,
  lockLetter,
  lockRecordingForLetter,
  setLetterStatus,
} from "~/models/letter.server";
import type { StoredLetterContent } from "~/models/schema";
import { getDb } from "./db.server";
import { DomainError } from "./domain-error.server";
import { letterLanguage, recordTokens, stopLetterJob } from "./letters.server";
import {
  diffSections,
  letterPlainText,
  parseLetterContent,
  sectionsOf,
  toStructuredContent,
  type LetterSection,
} from "./letters/letter-content";
import { LetterGenerationError, RefineError } from "./letters/letter-errors";
import { refineSections as refineSectionsWith, refineText as refineTextWith } from "./letters/refine.server";
import { getLanguageModel } from "./llm/engine.server";
import { LlmError, type TokenUsage } from "./llm/types";
import { hitRateLimit } from "./rate-limit.server";
import { getStorage } from "./storage.server";
import { getTranscript } from "./transcription.server";

// Reading, editing, refining, restoring and deleting letters (issue 6). Every change is a new version (who,
// when, what kind); nothing a doctor wrote is overwritten. A refinement is a proposal first: it becomes a
// version only when the doctor accepts it, and only if the letter has not changed since it was proposed.

export const MAX_INSTRUCTION_CHARS = 500;
/** Per user and hour: generation and refinement cost money and model time. */
export const REFINEMENTS_PER_HOUR = 60;

/** SPEC §7: the client strips "arztbriefe/"; both forms are accepted. */
export function letterKeyFrom(key: unknown) {
  const value = typeof key === "string" ? key.trim().replace(/^\/+/, "") : "";
  if (!value) throw new DomainError("invalid", "letters:errors.letterKeyRequired");
  return value.startsWith("arztbriefe/") ? value : `arztbriefe/${value}`;
}

export async function requireLetter(userId: string, key: unknown) {
  const letter = await findLetterByKey(getDb(), { ownerId: userId, key: letterKeyFrom(key) });
  if (!letter) throw new DomainError("not_found", "letters:errors.letterNotFound");
  return letter;
}

function metadataOf(row: {
  language_code: string;
  source_key: string;
  display_name: string | null;
  original_filename: string;
  tags: string[];
  template_id: string | null;
}) {
  return {
    language_code: row.language_code,
    source_key: row.source_key,
    display_name: row.display_name,
    source_file_display_name: row.display_name,
    original_filename: row.original_filename,
    tags: row.tags,
    template_id: row.template_id,
  };
}

/** SPEC §7 GET /api/arztbriefe: the owner's letters with their source and status. */
export async function listLetters({ userId }: { userId: string }) {
  const rows = await listLettersOfOwner({ ownerId: userId });
  return rows.map((row) => ({
    key: row.storage_key,
    filename: row.display_name ?? row.original_filename,
    erstelltAm: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    version: row.current_version,
    status: row.medical_letter_status,
    metadata: metadataOf(row),
    job:
      row.job_status && row.job_status !== "completed"
        ? { kind: row.job_kind, status: row.job_status, error: row.job_error_key, template_id: row.job_template_id }
        : null,
  }));
}

/** SPEC §7 GET /api/arztbrief/{key}. */
export async function getLetter({ userId, key }: { userId: string; key: unknown }) {
  const row = await requireLetter(userId, key);
  if (!row.language_code) throw new DomainError("invalid", "letters:errors.languageMissing");
  return {
    key: row.storage_key,
    filename: row.display_name ?? row.original_filename,
    erstelltAm: row.created_at.toISOString(),
    version: row.current_version,
    status: row.medical_letter_status,
    transcript_key: row.transcript_key,
    metadata: metadataOf(row),
    content: row.content,
  };
}

function sameContent(a: StoredLetterContent, b: StoredLetterContent) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * SPEC §7 PUT /api/arztbrief/{key} { content }: a new version when the content differs. With `baseVersion`
 * (the editor sends the version it loaded) a save over a newer version is refused, so two tabs cannot
 * silently overwrite each other.
 */
export async function saveLetter(args: { userId: string; key: unknown; content: unknown; baseVersion?: unknown }) {
  const parsed = parseLetterContent(args.content);
  if (!parsed.ok) throw new DomainError("invalid", "letters:errors.invalidContent", [], { reason: parsed.reason });
  const key = letterKeyFrom(args.key);
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const letter = await lockLetter(trx, { ownerId: args.userId, key });
      if (!letter) throw new DomainError("not_found", "letters:errors.letterNotFound");
      const base = args.baseVersion === undefined || args.baseVersion === "" ? null : Number(args.baseVersion);
      if (base !== null && base !== letter.current_version) {
        throw new DomainError("conflict", "letters:errors.changedMeanwhile");
      }
      const current = await getVersion(trx, {
        ownerId: args.userId,
        letterId: letter.id,
        version: letter.current_version,
      });
      if (current && sameContent(current.content, parsed.value)) {
        return { success: true as const, key, version: letter.current_version, changed: false };
      }
      await appendVersion(trx, {
        letterId: letter.id,
        ownerId: args.userId,
        version: letter.current_version + 1,
        kind: "edited",
        authorId: args.userId,
        templateId: null,
        content: parsed.value,
      });
      return { success: true as const, key, version: letter.current_version + 1, changed: true };
    });
}

/** Restoring an earlier version is itself a new version: history only grows. */
export async function restoreVersion(args: { userId: string; key: unknown; version: unknown }) {
  const key = letterKeyFrom(args.key);
  const wanted = Number(args.version);
  if (!Number.isInteger(wanted) || wanted < 1) throw new DomainError("invalid", "letters:errors.versionNotFound");
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const letter = await lockLetter(trx, { ownerId: args.userId, key });
      if (!letter) throw new DomainError("not_found", "letters:errors.letterNotFound");
      const source = await getVersion(trx, { ownerId: args.userId, letterId: letter.id, version: wanted });
      if (!source) throw new DomainError("not_found", "letters:errors.versionNotFound");
      if (wanted === letter.current_version) return { version: letter.current_version, changed: false };
      await appendVersion(trx, {
        letterId: letter.id,
        ownerId: args.userId,
        version: letter.current_version + 1,
        kind: "restored",
        authorId: args.userId,
        templateId: source.template_id,
        content: source.content,
        note: String(wanted),
      });
      return { version: letter.current_version + 1, changed: true };
    });
}

/** The history of a letter, newest first, each with its per-section change against the one before. */
export async function letterHistory(args: { userId: string; key: unknown }) {
  const letter = await requireLetter(args.userId, args.key);
  const versions = await listVersions({ ownerId: args.userId, letterId: letter.id });
  return versions.map((v, i) => {
    const previous = versions[i + 1];
    return {
      version: v.version,
      kind: v.kind,
      template_id: v.template_id,
      note: v.note,
      created_at: v.created_at.toISOString(),
      author: v.author_name ?? v.author_email,
      content: v.content,
      changes: previous ? diffSections(sectionsFor(previous.content), sectionsFor(v.content)) : null,
    };
  });
}

/** Plain-text letters compare as one section without a title. */
export function sectionsFor(content: StoredLetterContent): LetterSection[] {
  return sectionsOf(content) ?? [{ title: "", text: typeof content === "string" ? content : "" }];
}

/** SPEC §7 POST /api/delete-arztbrief: the letter and its versions; refused while a letter job runs. */
export async function deleteLetter(args: { userId: string; key: unknown }) {
  const letter = await requireLetter(args.userId, args.key);
  const recordingId = letter.recording_id!;
  await getDb()
    .transaction()
    .execute(async (trx) => {
      await lockRecordingForLetter(trx, { ownerId: args.userId, recordingId });
      const job = await findLetterJobOfRecording(trx, { ownerId: args.userId, recordingId });
      if (job && (job.status === "queued" || job.status === "running")) {
        throw new DomainError("conflict", "letters:errors.busy");
      }
      await deleteLetterJobOfRecording(trx, { ownerId: args.userId, recordingId });
      await deleteLetterRow(trx, { ownerId: args.userId, letterId: letter.id });
      await setLetterStatus(trx, { ownerId: args.userId, recordingId, status: "pending" });
    });
  await getStorage()
    .delete(letter.storage_key)
    .catch(() => undefined);
  return { success: true as const };
}

/** Reset and delete of a recording: stop the letter job, then the letters go with the recording. */
export { stopLetterJob };

async function refinementAllowed(userId: string) {
  const verdict = await hitRateLimit({ bucket: `refine:${userId}`, limit: REFINEMENTS_PER_HOUR, windowSeconds: 3600 });
  if (!verdict.allowed) throw new DomainError("rate_limited", "letters:errors.tooManyRequests");
}

function checkInstruction(query: unknown) {
  const text = typeof query === "string" ? query.trim() : "";
  if (!text) throw new DomainError("invalid", "letters:errors.instructionRequired");
  if (text.length > MAX_INSTRUCTION_CHARS) throw new DomainError("invalid", "letters:errors.instructionTooLong");
  return text;
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
export function scopeFrom(value: unknown, sections: LetterSection[] | null): RefineScope {
  if (value === "__full__" || !sections) return { kind: "full_text" };
  if (value === "__all__" || value === undefined || value === "") return { kind: "all" };
  const title = String(value);
  if (!sections.some((s) => s.title === title)) throw new DomainError("invalid", "letters:errors.sectionNotFound");
  return { kind: "section", title };
}

/**
 * A refinement of the current letter as a proposal (not yet a version): 'All Sections' refines every section
 * in one call, one section only that section, 'Full text only' the whole text as one.
 */
export async function proposeRefinement(args: { userId: string; key: unknown; scope: unknown; query: unknown }) {
  const query = checkInstruction(args.query);
  const letter = await requireLetter(args.userId, args.key);
  const sections = sectionsOf(letter.content);
  const scope = scopeFrom(args.scope, sections);
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
  await charge(args.userId, scope.kind === "all" ? "refine-arztbrief-bulk" : "refine-arztbrief-structured", usage);
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

export async function getProposal(args: { userId: string; key: unknown; id: unknown }) {
  const letter = await requireLetter(args.userId, args.key);
  if (typeof args.id !== "string" || !/^[0-9a-f-]{36}$/i.test(args.id)) {
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
export async function decideRefinement(args: { userId: string; key: unknown; id: unknown; accept: boolean }) {
  const proposal = await getProposal(args);
  if (proposal.status !== "open") throw new DomainError("conflict", "letters:errors.proposalDecided");
  const key = letterKeyFrom(args.key);
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const letter = await lockLetter(trx, { ownerId: args.userId, key });
      if (!letter) throw new DomainError("not_found", "letters:errors.letterNotFound");
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

function languageParam(value: unknown) {
  return letterLanguage(typeof value === "string" ? value : "de-DE");
}

function clientTranscript(value: unknown) {
  if (typeof value === "string") return value.slice(0, 400_000);
  if (value && typeof value === "object") {
    const raw =
      (value as { raw_transcript?: unknown; formatted_transcript?: unknown }).formatted_transcript ??
      (value as { raw_transcript?: unknown }).raw_transcript;
    if (typeof raw === "string") return raw.slice(0, 400_000);
  }
  return undefined;
}

/** SPEC §7 POST /api/refine-arztbrief-structured → { refined_arztbrief }. Stateless: the text is the caller's. */
export async function refineStructuredCall(args: { userId: string; body: Record<string, unknown> }) {
  const query = checkInstruction(args.body.query);
  const text = typeof args.body.arztbrief_text === "string" ? args.body.arztbrief_text : "";
  if (!text.trim()) throw new DomainError("invalid", "letters:errors.textRequired");
  const sectionTitle =
    typeof args.body.section_context === "string" && args.body.section_context.trim()
      ? args.body.section_context.trim().slice(0, 200)
      : undefined;
  await refinementAllowed(args.userId);
  const model = getLanguageModel();
  const result = await refineText({
    model,
    language: languageParam(args.body.language_code),
    text,
    query,
    sectionTitle,
    transcript: clientTranscript(args.body.transcript_data),
  });
  await charge(args.userId, "refine-arztbrief-structured", result.usage);
  return { refined_arztbrief: result.text };
}

/** SPEC §7 POST /api/refine-arztbrief-bulk → { refined_content }, in the shape it was given. */
export async function refineBulkCall(args: { userId: string; body: Record<string, unknown> }) {
  const query = checkInstruction(args.body.query);
  const given = args.body.arztbrief_content;
  const asObject = Array.isArray(given) ? { structured_output: given } : given;
  const sections = sectionsOf(asObject as StoredLetterContent);
  if (!sections || sections.length === 0)
    throw new DomainError("invalid", "letters:errors.invalidContent", [], { reason: "structured_output" });
  await refinementAllowed(args.userId);
  const model = getLanguageModel();
  const result = await refineSections({
    model,
    language: languageParam(args.body.language_code),
    sections,
    query,
    transcript: clientTranscript(args.body.transcript_data),
  });
  await charge(args.userId, "refine-arztbrief-bulk", result.usage);
  const content = toStructuredContent(result.sections);
  return { refined_content: Array.isArray(given) ? content.structured_output : content };
}
