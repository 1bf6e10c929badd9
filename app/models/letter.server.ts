import { type Kysely, type Transaction } from "kysely";
import { keptForOwner } from "./owner-cache.server";
import { getDb } from "~/models/db.server";
import type { Database, LetterVersionKind, StoredLetterContent } from "./schema";

// Letters, their versions and refinement proposals, scoped by owner (STYLE.md §2). A recording has one current
// letter; every change appends a version (ADR 0012).

type Db = Kysely<Database> | Transaction<Database>;
type Tx = Transaction<Database>;

const letterColumns = [
  "letters.id",
  "letters.storage_key",
  "letters.recording_id",
  "letters.template_id",
  "letters.language_code",
  "letters.current_version",
  "letters.tags",
  "letters.created_at",
  "letters.updated_at",
  "letters.released_at",
] as const;

const recordingColumns = [
  "recordings.storage_key as source_key",
  "recordings.original_filename",
  "recordings.display_name",
  "recordings.medical_letter_status",
  "recordings.transcript_key",
  "recordings.consent_kind",
  "recordings.consent_given_by",
  "recordings.consent_confirmed_at",
] as const;

/** The doctor releases the letter's current version (issue 22); answers whether the letter was found. */
export async function releaseLetter(args: { ownerId: string; letterId: string; at: Date }) {
  const result = await getDb()
    .updateTable("letters")
    .set({ released_at: args.at, released_by: args.ownerId })
    .where("id", "=", args.letterId)
    .where("owner_id", "=", args.ownerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findLetterOfRecording(db: Db, args: { ownerId: string; recordingId: string }) {
  return db
    .selectFrom("letters")
    .where("owner_id", "=", args.ownerId)
    .where("recording_id", "=", args.recordingId)
    .select(["id", "storage_key", "current_version", "template_id"])
    .executeTakeFirst();
}

/** One letter with its source recording and current content, for its owner. */
export async function findLetterByKey(db: Db, args: { ownerId: string; key: string }) {
  return db
    .selectFrom("letters")
    .innerJoin("recordings", "recordings.id", "letters.recording_id")
    .innerJoin("letter_versions", (join) =>
      join
        .onRef("letter_versions.letter_id", "=", "letters.id")
        .onRef("letter_versions.version", "=", "letters.current_version"),
    )
    .where("letters.owner_id", "=", args.ownerId)
    .where("letters.storage_key", "=", args.key)
    .select([
      ...letterColumns,
      ...recordingColumns,
      "letter_versions.content",
      "letter_versions.created_at as saved_at",
    ])
    .executeTakeFirst();
}

export async function lockLetter(trx: Tx, args: { ownerId: string; key: string }) {
  return trx
    .selectFrom("letters")
    .where("owner_id", "=", args.ownerId)
    .where("storage_key", "=", args.key)
    .select(["id", "recording_id", "current_version", "template_id", "language_code"])
    .forUpdate()
    .executeTakeFirst();
}

/** SPEC §2 Arztbriefe list: the owner's letters, newest first, with their source. */
export async function listLettersOfOwner({ ownerId }: { ownerId: string }) {
  return keptForOwner(ownerId, "letters", [], () => lettersOf(ownerId));
}

function lettersOf(ownerId: string) {
  return getDb()
    .selectFrom("letters")
    .innerJoin("recordings", "recordings.id", "letters.recording_id")
    .leftJoin("letter_jobs", "letter_jobs.recording_id", "letters.recording_id")
    .where("letters.owner_id", "=", ownerId)
    .select([
      ...letterColumns,
      ...recordingColumns,
      "recordings.template_id as recording_template_id",
      "letter_jobs.kind as job_kind",
      "letter_jobs.status as job_status",
      "letter_jobs.error_key as job_error_key",
      "letter_jobs.template_id as job_template_id",
    ])
    .orderBy("letters.created_at", "desc")
    .execute();
}

export async function insertLetter(
  trx: Tx,
  args: { ownerId: string; recordingId: string; key: string; templateId: string; language: string; tags: string[] },
) {
  return trx
    .insertInto("letters")
    .values({
      tags: JSON.stringify(args.tags),
      owner_id: args.ownerId,
      recording_id: args.recordingId,
      storage_key: args.key,
      template_id: args.templateId,
      language_code: args.language,
      current_version: 1,
      updated_at: new Date(),
    })
    .onConflict((oc) => oc.column("recording_id").where("recording_id", "is not", null).doNothing())
    .returning(["id", "storage_key"])
    .executeTakeFirst();
}

/** A new current version (the letter row must be locked by the caller). */
export async function appendVersion(
  trx: Tx,
  args: {
    letterId: string;
    ownerId: string;
    version: number;
    kind: LetterVersionKind;
    authorId: string | null;
    templateId: string | null;
    content: StoredLetterContent;
    note?: string | null;
  },
) {
  await trx
    .insertInto("letter_versions")
    .values({
      letter_id: args.letterId,
      owner_id: args.ownerId,
      version: args.version,
      kind: args.kind,
      author_id: args.authorId,
      template_id: args.templateId,
      content: JSON.stringify(args.content),
      note: args.note ?? null,
    })
    .execute();
  await trx
    .updateTable("letters")
    .set({
      current_version: args.version,
      updated_at: new Date(),
      // What was released is no longer the letter: it must be released again.
      released_at: null,
      released_by: null,
      ...(args.templateId ? { template_id: args.templateId } : {}),
    })
    .where("id", "=", args.letterId)
    .where("owner_id", "=", args.ownerId)
    .execute();
}

export async function listVersions(args: { ownerId: string; letterId: string }) {
  return getDb()
    .selectFrom("letter_versions")
    .leftJoin("users", "users.id", "letter_versions.author_id")
    .where("letter_versions.owner_id", "=", args.ownerId)
    .where("letter_versions.letter_id", "=", args.letterId)
    .select([
      "letter_versions.version",
      "letter_versions.kind",
      "letter_versions.template_id",
      "letter_versions.note",
      "letter_versions.created_at",
      "letter_versions.content",
      "users.name as author_name",
      "users.email as author_email",
    ])
    .orderBy("letter_versions.version", "desc")
    .execute();
}

export async function getVersion(db: Db, args: { ownerId: string; letterId: string; version: number }) {
  return db
    .selectFrom("letter_versions")
    .where("owner_id", "=", args.ownerId)
    .where("letter_id", "=", args.letterId)
    .where("version", "=", args.version)
    .select(["version", "kind", "template_id", "content", "created_at"])
    .executeTakeFirst();
}

export async function deleteLetterRow(db: Db, args: { ownerId: string; letterId: string }) {
  const result = await db
    .deleteFrom("letters")
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.letterId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The user's own finished letters of one template, newest first (AI Learning style examples). */
export async function listStyleExamples(args: {
  ownerId: string;
  templateId: string;
  language: string;
  excludeRecordingId: string;
  limit: number;
}) {
  return getDb()
    .selectFrom("letters")
    .innerJoin("letter_versions", (join) =>
      join
        .onRef("letter_versions.letter_id", "=", "letters.id")
        .onRef("letter_versions.version", "=", "letters.current_version"),
    )
    .where("letters.owner_id", "=", args.ownerId)
    .where("letters.template_id", "=", args.templateId)
    .where("letters.language_code", "=", args.language)
    .where("letters.recording_id", "!=", args.excludeRecordingId)
    .select(["letter_versions.content"])
    .orderBy("letters.updated_at", "desc")
    .limit(args.limit)
    .execute();
}

/** A proposal to accept or reject; `db` a transaction when it must land with something else (a job's outcome). */
export async function insertProposal(
  args: {
    ownerId: string;
    letterId: string;
    baseVersion: number;
    scope: "all" | "full_text" | "section";
    sectionTitle: string | null;
    query: string;
    content: StoredLetterContent;
  },
  db: Db = getDb(),
) {
  return db
    .insertInto("letter_proposals")
    .values({
      owner_id: args.ownerId,
      letter_id: args.letterId,
      base_version: args.baseVersion,
      scope: args.scope,
      section_title: args.sectionTitle,
      query: args.query,
      content: JSON.stringify(args.content),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
}

export async function findProposal(db: Db, args: { ownerId: string; letterId: string; id: string }) {
  return db
    .selectFrom("letter_proposals")
    .where("owner_id", "=", args.ownerId)
    .where("letter_id", "=", args.letterId)
    .where("id", "=", args.id)
    .select(["id", "base_version", "scope", "section_title", "query", "content", "status", "created_at"])
    .executeTakeFirst();
}

export async function decideProposal(db: Db, args: { ownerId: string; id: string; status: "accepted" | "rejected" }) {
  const result = await db
    .updateTable("letter_proposals")
    .set({ status: args.status, decided_at: new Date() })
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.id)
    .where("status", "=", "open")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setLetterTags(args: { ownerId: string; recordingId: string; tags: string[] }) {
  await getDb()
    .updateTable("letters")
    .set({ tags: JSON.stringify(args.tags) })
    .where("owner_id", "=", args.ownerId)
    .where("recording_id", "=", args.recordingId)
    .execute();
}

/** Every version's kind and content, oldest first: what the letter check needs to tell the model's wording apart. */
export async function listVersionContents(args: { ownerId: string; letterId: string }) {
  return getDb()
    .selectFrom("letter_versions")
    .where("owner_id", "=", args.ownerId)
    .where("letter_id", "=", args.letterId)
    .select(["version", "kind", "content"])
    .orderBy("version", "asc")
    .execute();
}
