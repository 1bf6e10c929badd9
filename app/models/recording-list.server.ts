import { sql, type Kysely } from "kysely";
import { keptForOwner } from "./owner-cache.server";
import { getDb } from "~/models/db.server";
import type { Database } from "./schema";

// The three lists of SPEC §2 (Audio, Transcriptions, Arztbriefe) a page at a time, in SQL: a clinician with 1,000
// recordings had every row read, its dates parsed and its key sorted in JavaScript on each view, to show 50 of them
// (issue 9's list-load budget). Each query picks the page's rows by an index on owner and time, then joins only
// those, and returns each row's "Recording #n" and the list's total. Scoped by owner throughout.

/**
 * SPEC §3: recordings are numbered 'Recording #n' by the timestamp inside their storage key, the oldest #1
 * (key_stamp, migration 0013: a key without one comes last); equal stamps are numbered newest first. Every ready
 * recording of the owner counts, whatever list shows it. Materialized: the numbering is worked out once per
 * query, never again for each row it is joined to. `total` is the number of ready recordings.
 */
function recordingNumbers(db: Kysely<Database>, ownerId: string) {
  return readyRows(db, ownerId).select([
    "id",
    sql<number>`(row_number() over (order by key_stamp, created_at desc))::int`.as("number"),
    sql<number>`(count(*) over ())::int`.as("total"),
  ]);
}

/** The owner's ready recordings' rows, unjoined. */
function readyRows(db: Kysely<Database>, ownerId: string) {
  return db.selectFrom("recordings").where("owner_id", "=", ownerId).where("upload_status", "=", "ready");
}

/** A query with the owner's recording numbers as the table "numbers" (see recordingNumbers). */
function withNumbers(db: Kysely<Database>, ownerId: string) {
  return db.with(
    (cte) => cte("numbers").materialized(),
    () => recordingNumbers(db, ownerId),
  );
}

/** What a list shows of the recording a transcript or letter comes from. */
const sourceColumns = [
  "recordings.storage_key as source_key",
  "recordings.original_filename",
  "recordings.display_name",
  "recordings.medical_letter_status",
  "recordings.consent_kind",
  "recordings.consent_given_by",
  "recordings.consent_confirmed_at",
] as const;

export type Page = { offset: number; limit: number };

/** A page's rows and the list's total (counted apart only when the page is past the end and so empty). */
async function withTotal<T extends { total: number }>(rows: T[], offset: number, count: () => Promise<number>) {
  const total = rows.length ? rows[0].total : offset === 0 ? 0 : await count();
  return { rows: rows.map(({ total: _, ...row }) => row), total };
}

const countOf = sql<number>`count(*)::int`.as("n");

function readyRecordings(db: Kysely<Database>, ownerId: string) {
  return withNumbers(db, ownerId)
    .selectFrom("recordings")
    .innerJoin("numbers", "numbers.id", "recordings.id")
    .leftJoin("letters", (join) =>
      join.onRef("letters.recording_id", "=", "recordings.id").on("letters.owner_id", "=", ownerId),
    )
    .where("recordings.owner_id", "=", ownerId)
    .selectAll("recordings")
    .select([
      "letters.storage_key as letter_key",
      "letters.released_at as letter_released_at",
      "numbers.number",
      "numbers.total",
    ]);
}

/** SPEC §2 Audio section: a page of the owner's ready recordings, newest first. */
export async function pageOfReadyRecordings({ ownerId, offset, limit }: { ownerId: string } & Page) {
  return keptForOwner(ownerId, "pageOfReadyRecordings", [offset, limit], () =>
    pageOfReadyRecordingsRead(ownerId, offset, limit),
  );
}

async function pageOfReadyRecordingsRead(ownerId: string, offset: number, limit: number) {
  const db = getDb();
  const page = readyRows(db, ownerId)
    .orderBy("created_at", "desc")
    .orderBy("id")
    .limit(limit)
    .offset(offset)
    .select("id");
  const rows = await readyRecordings(db, ownerId)
    .where("recordings.id", "in", page)
    .orderBy("recordings.created_at", "desc")
    .orderBy("recordings.id")
    .execute();
  return withTotal(rows, offset, async () => {
    const row = await readyRows(db, ownerId).select(countOf).executeTakeFirstOrThrow();
    return row.n;
  });
}

/** One ready recording of the owner with its number (a dialog's row, on whatever page it is). */
export async function findNumberedRecording({ ownerId, key }: { ownerId: string; key: string }) {
  return readyRecordings(getDb(), ownerId).where("recordings.storage_key", "=", key).executeTakeFirst();
}

/** The owner's completed transcripts, newest first (the rows of the Transcriptions section). */
function completedTranscripts(db: Kysely<Database>, ownerId: string) {
  return db
    .selectFrom("transcripts")
    .innerJoin("recordings", "recordings.id", "transcripts.recording_id")
    .where("transcripts.owner_id", "=", ownerId)
    .where("recordings.owner_id", "=", ownerId)
    .where("recordings.transcription_status", "=", "completed");
}

/** SPEC §2 Transcriptions section: a page of the owner's completed transcripts, newest first. */
export async function pageOfTranscripts({ ownerId, offset, limit }: { ownerId: string } & Page) {
  return keptForOwner(ownerId, "pageOfTranscripts", [offset, limit], () =>
    pageOfTranscriptsRead(ownerId, offset, limit),
  );
}

async function pageOfTranscriptsRead(ownerId: string, offset: number, limit: number) {
  const db = getDb();
  const rows = await withNumbers(db, ownerId)
    .with("page", () =>
      completedTranscripts(db, ownerId)
        .select(["transcripts.id", sql<number>`(count(*) over ())::int`.as("total")])
        .orderBy("transcripts.created_at", "desc")
        .orderBy("transcripts.id")
        .limit(limit)
        .offset(offset),
    )
    .selectFrom("page")
    .innerJoin("transcripts", "transcripts.id", "page.id")
    .innerJoin("recordings", "recordings.id", "transcripts.recording_id")
    .leftJoin("numbers", "numbers.id", "recordings.id")
    .leftJoin("letters", (join) =>
      join.onRef("letters.recording_id", "=", "recordings.id").on("letters.owner_id", "=", ownerId),
    )
    .where("recordings.owner_id", "=", ownerId)
    .select([
      "recordings.id as recording_id",
      ...sourceColumns,
      "transcripts.storage_key",
      "transcripts.created_at",
      "letters.storage_key as letter_key",
      "numbers.number",
      "page.total",
    ])
    .orderBy("transcripts.created_at", "desc")
    .orderBy("transcripts.id")
    .execute();
  return withTotal(rows, offset, async () => {
    const row = await completedTranscripts(db, ownerId).select(countOf).executeTakeFirstOrThrow();
    return row.n;
  });
}

function lettersWithSource(db: Kysely<Database>, ownerId: string) {
  return withNumbers(db, ownerId)
    .selectFrom("letters")
    .innerJoin("recordings", "recordings.id", "letters.recording_id")
    .leftJoin("numbers", "numbers.id", "recordings.id")
    .leftJoin("letter_jobs", "letter_jobs.recording_id", "letters.recording_id")
    .where("letters.owner_id", "=", ownerId)
    .where("recordings.owner_id", "=", ownerId)
    .select([
      "letters.id",
      "letters.storage_key",
      "letters.current_version",
      "letters.template_id",
      "letters.created_at",
      ...sourceColumns,
      "letters.released_at",
      "letter_jobs.status as job_status",
      "letter_jobs.error_key as job_error_key",
      "numbers.number",
    ]);
}

/** SPEC §2 Arztbriefe section: a page of the owner's letters with their source, newest first. */
export async function pageOfLetters({ ownerId, offset, limit }: { ownerId: string } & Page) {
  return keptForOwner(ownerId, "pageOfLetters", [offset, limit], () => pageOfLettersRead(ownerId, offset, limit));
}

async function pageOfLettersRead(ownerId: string, offset: number, limit: number) {
  const db = getDb();
  const letters = () =>
    db
      .selectFrom("letters")
      .innerJoin("recordings", "recordings.id", "letters.recording_id")
      .where("letters.owner_id", "=", ownerId)
      .where("recordings.owner_id", "=", ownerId);
  const page = letters()
    .select("letters.id")
    .orderBy("letters.created_at", "desc")
    .orderBy("letters.id")
    .limit(limit)
    .offset(offset);
  const [rows, total] = await Promise.all([
    lettersWithSource(db, ownerId)
      .where("letters.id", "in", page)
      .orderBy("letters.created_at", "desc")
      .orderBy("letters.id")
      .execute(),
    letters().select(countOf).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.n };
}

/** One letter of the owner with its source and number (the delete dialog's, on whatever page it is). */
export async function findNumberedLetter({ ownerId, key }: { ownerId: string; key: string }) {
  return lettersWithSource(getDb(), ownerId).where("letters.storage_key", "=", key).executeTakeFirst();
}
