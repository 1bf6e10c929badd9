import { consentColumns, type ConsentRecord } from "./consent-rules";
import { keptForOwner } from "./owner-cache.server";
import type { Kysely, Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database } from "./schema";

// Recording queries, always scoped by the owner (STYLE.md §2). Writes take an optional transaction.

type Db = Kysely<Database> | Transaction<Database>;

const fileColumns = [
  "id",
  "storage_key",
  "original_filename",
  "display_name",
  "tags",
  "language_code",
  "template_id",
  "transcription_mode",
  "transcription_status",
  "transcript_key",
  "medical_letter_status",
  "upload_status",
  "declared_type",
  "size_bytes",
  "duration_seconds",
  "audio_format",
  "created_at",
  "multipart_upload_id",
  "multipart_part_size",
  "multipart_part_count",
  "declared_size",
  "created_via",
  "source_type",
  "original_mime_type",
  "audio_deleted_at",
] as const;

export async function findRecordingByKey({ ownerId, key }: { ownerId: string; key: string }) {
  return getDb()
    .selectFrom("recordings")
    .where("owner_id", "=", ownerId)
    .where("storage_key", "=", key)
    .select(fileColumns)
    .executeTakeFirst();
}

export async function listReadyRecordings({ ownerId }: { ownerId: string }) {
  return keptForOwner(ownerId, "readyRecordings", [], () => readyRecordingsOf(ownerId));
}

function readyRecordingsOf(ownerId: string) {
  return (
    getDb()
      .selectFrom("recordings")
      .leftJoin("letters", (join) =>
        join.onRef("letters.recording_id", "=", "recordings.id").on("letters.owner_id", "=", ownerId),
      )
      .where("recordings.owner_id", "=", ownerId)
      .where("recordings.upload_status", "=", "ready")
      // Only what the list shows (recordings.server.ts listFiles): of 1,000 recordings every other column was read,
      // sent through the socket and parsed (its timestamps into dates) to be dropped.
      .select([
        "recordings.storage_key",
        "recordings.original_filename",
        "recordings.created_at",
        "recordings.transcription_status",
        "recordings.template_id",
        "recordings.language_code",
        "recordings.tags",
        "recordings.display_name",
        "recordings.transcript_key",
        "recordings.medical_letter_status",
        "recordings.transcription_mode",
        "recordings.created_via",
        "recordings.original_mime_type",
        "recordings.duration_seconds",
        "letters.storage_key as letter_key",
      ])
      .orderBy("recordings.created_at", "desc")
      .execute()
  );
}

export async function insertUploadSlot(args: {
  ownerId: string;
  key: string;
  originalFilename: string;
  languageCode: string;
  declaredType: string;
  multipart?: { uploadId: string; partSize: number; partCount: number; declaredSize: number };
  /** The patient's consent the user confirmed with the upload; null: not documented. */
  consent?: ConsentRecord | null;
  db?: Db;
}) {
  return (args.db ?? getDb())
    .insertInto("recordings")
    .values({
      owner_id: args.ownerId,
      storage_key: args.key,
      original_filename: args.originalFilename,
      language_code: args.languageCode,
      declared_type: args.declaredType,
      upload_status: "awaiting_upload",
      tags: "[]",
      multipart_upload_id: args.multipart?.uploadId ?? null,
      multipart_part_size: args.multipart?.partSize ?? null,
      multipart_part_count: args.multipart?.partCount ?? null,
      declared_size: args.multipart?.declaredSize ?? null,
      ...consentColumns(args.consent ?? null),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
}

export async function updateRecording(args: {
  ownerId: string;
  id: string;
  set: Partial<{
    display_name: string | null;
    tags: string;
    template_id: string | null;
    language_code: string;
    transcription_mode: "transcript" | "transcript_and_letter";
    upload_status: "ready";
    size_bytes: number;
    duration_seconds: number;
    audio_format: string;
    transcription_status: "pending";
    transcript_key: null;
    medical_letter_status: "pending";
    multipart_upload_id: null;
    multipart_part_size: null;
    multipart_part_count: null;
  }> &
    Partial<ReturnType<typeof consentColumns>>;
  db?: Db;
}) {
  await (args.db ?? getDb())
    .updateTable("recordings")
    .set({ ...args.set, updated_at: new Date() })
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.id)
    .execute();
}

export async function deleteRecordingRow({ ownerId, id }: { ownerId: string; id: string }) {
  await getDb().deleteFrom("recordings").where("owner_id", "=", ownerId).where("id", "=", id).execute();
}

export async function deleteLettersOfRecording({ ownerId, recordingId }: { ownerId: string; recordingId: string }) {
  const result = await getDb()
    .deleteFrom("letters")
    .where("owner_id", "=", ownerId)
    .where("recording_id", "=", recordingId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function addRecordingContext(args: {
  ownerId: string;
  recordingId: string;
  kind: "text" | "pdf" | "patient_record";
  text: string;
  sourceName?: string | null;
  db?: Db;
}) {
  await (args.db ?? getDb())
    .insertInto("recording_context")
    .values({
      owner_id: args.ownerId,
      recording_id: args.recordingId,
      kind: args.kind,
      text: args.text,
      source_name: args.sourceName ?? null,
    })
    .execute();
}

/**
 * Maintenance across owners (audio retention): recordings whose letter is completed and was last changed before
 * `before`, with their audio still stored.
 */
export async function listAudioPastRetention({ before }: { before: Date }) {
  return getDb()
    .selectFrom("recordings")
    .innerJoin("letters", (join) =>
      join.onRef("letters.recording_id", "=", "recordings.id").onRef("letters.owner_id", "=", "recordings.owner_id"),
    )
    .where("recordings.upload_status", "=", "ready")
    .where("recordings.audio_deleted_at", "is", null)
    .where("letters.released_at", "<", before)
    .select(["recordings.id", "recordings.owner_id", "recordings.storage_key", "recordings.created_via"])
    .execute();
}

/** Maintenance across owners: recordings whose letter was released before `before`, with what is left of them. */
export async function listReleasedBefore({ before, withTranscript }: { before: Date; withTranscript?: boolean }) {
  let query = getDb()
    .selectFrom("recordings")
    .innerJoin("letters", (join) =>
      join.onRef("letters.recording_id", "=", "recordings.id").onRef("letters.owner_id", "=", "recordings.owner_id"),
    )
    .where("letters.released_at", "<", before);
  if (withTranscript) query = query.where("recordings.transcript_key", "is not", null);
  return query
    .select(["recordings.id", "recordings.owner_id", "recordings.storage_key", "recordings.transcript_key"])
    .execute();
}

export async function markAudioDeleted(args: { ownerId: string; id: string; at: Date }) {
  await getDb()
    .updateTable("recordings")
    .set({ audio_deleted_at: args.at })
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.id)
    .execute();
}

/**
 * Maintenance across owners: upload slots never confirmed. Only uploads (created_via null): a live recording
 * waiting for the browser's copy of its audio already holds a transcript, which must not go with it.
 */
export async function listStaleUploadSlots({ before }: { before: Date }) {
  return getDb()
    .selectFrom("recordings")
    .where("upload_status", "=", "awaiting_upload")
    .where("created_via", "is", null)
    .where("created_at", "<", before)
    .select(["id", "owner_id", "storage_key", "multipart_upload_id"])
    .execute();
}
