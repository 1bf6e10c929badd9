import {
  deleteLetterJobOfRecording,
  findLetterJobOfRecording,
  lockRecordingForLetter,
  setLetterStatus,
} from "~/models/letter-job.server";
import {
  appendVersion,
  deleteLetterRow,
  findLetterByKey,
  getVersion,
  listLettersOfOwner,
  listVersions,
  lockLetter,
} from "~/models/letter.server";
import type { Transaction } from "kysely";
import type { Database, StoredLetterContent } from "~/models/schema";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { diffSections, parseLetterContent, sectionsOf, type LetterSection } from "./letter-content";

// Reading, editing, restoring and deleting letters (issue 6). Every change is a new version (who, when, what
// kind); nothing a doctor wrote is overwritten. Refinement lives in letter-refinement.server.ts.

/**
 * SPEC §7: the client strips "arztbriefe/"; both forms are accepted. The doors hand over the key as text (a JSON
 * body's through api-fields' requiredKey with this message, a path's splat as "" when missing); blank is refused.
 */
export function letterKeyFrom(key: string) {
  const value = key.trim().replace(/^\/+/, "");
  if (!value) throw new DomainError("invalid", "letters:errors.letterKeyRequired");
  return value.startsWith("arztbriefe/") ? value : `arztbriefe/${value}`;
}

/** The content a door received (a JSON body's `content`, the editor's sections), as a letter may store it. */
export function letterContentFrom(value: unknown): StoredLetterContent {
  const parsed = parseLetterContent(value);
  if (!parsed.ok) throw new DomainError("invalid", "letters:errors.invalidContent", [], { reason: parsed.reason });
  return parsed.value;
}

/**
 * The version a save was based on, as the doors have always read it: absent or "" is none; anything else is
 * compared as Number() reads it, so a value that names no version (null, "x") is refused as a conflict by saveLetter.
 */
export function baseVersionFrom(value: unknown): number | null {
  return value === undefined || value === "" ? null : Number(value);
}

export async function requireLetter(userId: string, key: string) {
  const letter = await findLetterByKey(getDb(), { ownerId: userId, key: letterKeyFrom(key) });
  if (!letter) throw new DomainError("not_found", "letters:errors.letterNotFound");
  return letter;
}

type LockedLetter = NonNullable<Awaited<ReturnType<typeof lockLetter>>>;

/** Runs `change` in a transaction that holds the user's letter locked: one change of a letter at a time. */
export async function changeLockedLetter<T>(
  userId: string,
  key: string,
  change: (trx: Transaction<Database>, letter: LockedLetter) => Promise<T>,
) {
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const letter = await lockLetter(trx, { ownerId: userId, key });
      if (!letter) throw new DomainError("not_found", "letters:errors.letterNotFound");
      return change(trx, letter);
    });
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
export async function getLetter({ userId, key }: { userId: string; key: string }) {
  const row = await requireLetter(userId, key);
  if (!row.language_code) throw new DomainError("invalid", "letters:errors.languageMissing");
  return {
    key: row.storage_key,
    filename: row.display_name ?? row.original_filename,
    erstelltAm: row.created_at.toISOString(),
    version: row.current_version,
    status: row.medical_letter_status,
    transcript_key: row.transcript_key,
    recording_id: row.recording_id,
    language_code: row.language_code,
    metadata: metadataOf(row),
    content: row.content,
    id: row.id,
    /** When the doctor released the current version ("Freigegeben"); null: not released. */
    releasedAt: row.released_at,
    consent: {
      consent_kind: row.consent_kind,
      consent_given_by: row.consent_given_by,
      consent_confirmed_at: row.consent_confirmed_at,
    },
  };
}

function sameContent(a: StoredLetterContent, b: StoredLetterContent) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * SPEC §7 PUT /api/arztbrief/{key} { content }: a new version when the content differs. With `baseVersion`
 * (the editor sends the version it loaded) a save over a newer version is refused, so two tabs cannot
 * silently overwrite each other. The doors check the content first (letterContentFrom), then the key.
 */
export async function saveLetter(args: {
  userId: string;
  key: string;
  content: StoredLetterContent;
  baseVersion: number | null;
}) {
  const key = letterKeyFrom(args.key);
  return changeLockedLetter(args.userId, key, async (trx, letter) => {
    const base = args.baseVersion;
    if (base !== null && base !== letter.current_version) {
      throw new DomainError("conflict", "letters:errors.changedMeanwhile");
    }
    const current = await getVersion(trx, {
      ownerId: args.userId,
      letterId: letter.id,
      version: letter.current_version,
    });
    if (current && sameContent(current.content, args.content)) {
      return { success: true as const, key, version: letter.current_version, changed: false };
    }
    await appendVersion(trx, {
      letterId: letter.id,
      ownerId: args.userId,
      version: letter.current_version + 1,
      kind: "edited",
      authorId: args.userId,
      templateId: null,
      content: args.content,
    });
    return { success: true as const, key, version: letter.current_version + 1, changed: true };
  });
}

/** Restoring an earlier version is itself a new version: history only grows. */
export async function restoreVersion(args: { userId: string; key: string; version: number }) {
  const key = letterKeyFrom(args.key);
  const wanted = args.version;
  if (!Number.isInteger(wanted) || wanted < 1) throw new DomainError("invalid", "letters:errors.versionNotFound");
  return changeLockedLetter(args.userId, key, async (trx, letter) => {
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
export async function letterHistory(args: { userId: string; key: string }) {
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
export async function deleteLetter(args: { userId: string; key: string }) {
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
  return { success: true as const };
}
