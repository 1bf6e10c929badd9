import { consentColumns, type ConsentRecord } from "./consent-rules";
import { sql, type Kysely, type Transaction } from "kysely";
import type { Database, TranscriptionMode } from "./schema";
import { getDb } from "~/models/db.server";

// Saved live recordings (issue 7): rows of `recordings` with created_via 'realtime' (migration 0007), always
// scoped by owner (STYLE.md §2). A save writes everything in one transaction, so most of these take it (or the
// database) as their first argument. `audio_format` means what it means for an upload — the container of the
// stored audio as the server made it — and stays null while a live recording has no audio yet.

type Db = Kysely<Database> | Transaction<Database>;

export const LIVE_CREATED_VIA = "realtime" as const;
export const LIVE_SOURCE_TYPE = "realtime_recording" as const;

/** Whether a recording row is a saved live recording (uploads have no created_via). */
export function isLiveRecording(row: { created_via: string | null }) {
  return row.created_via === LIVE_CREATED_VIA;
}

const liveColumns = [
  "id",
  "storage_key",
  "transcript_key",
  "upload_status",
  "transcription_mode",
  "medical_letter_status",
  "declared_type",
  "original_mime_type",
] as const;

/** A live recording of this owner by its audio key; undefined for anyone else's, or an upload's. */
export async function findLiveRecording(db: Db, { ownerId, key }: { ownerId: string; key: string }) {
  return db
    .selectFrom("recordings")
    .where("owner_id", "=", ownerId)
    .where("storage_key", "=", key)
    .where("created_via", "=", LIVE_CREATED_VIA)
    .select(liveColumns)
    .executeTakeFirst();
}

/**
 * The live recording an earlier save of the same payload made (the fingerprint is unique per owner). Several
 * fingerprints: the same payload keyed with each secret of the rotation list, so a save from before a rotation
 * is still found.
 */
export async function findLiveRecordingByFingerprint(
  db: Db,
  { ownerId, fingerprints }: { ownerId: string; fingerprints: readonly [string, ...string[]] },
) {
  return db
    .selectFrom("recordings")
    .where("owner_id", "=", ownerId)
    .where("save_fingerprint", "in", fingerprints)
    .where("created_via", "=", LIVE_CREATED_VIA)
    .select(liveColumns)
    .executeTakeFirst();
}

/**
 * Serialises saves of the same payload (a client retry racing the first attempt) until the transaction ends,
 * so the second finds the first's row instead of failing on the unique index.
 */
export async function lockSaveFingerprint(trx: Transaction<Database>, fingerprint: string) {
  await sql`select pg_advisory_xact_lock(hashtext(${`live-save:${fingerprint}`}))`.execute(trx);
}

export type NewLiveRecording = {
  ownerId: string;
  fingerprint: string;
  audioKey: string;
  /** Null for a recording saved to be transcribed like an upload (its engine could not recognise it live). */
  transcriptKey: string | null;
  originalFilename: string;
  displayName: string | null;
  tags: string[];
  language: string;
  templateId: string | null;
  mode: TranscriptionMode;
  originalMimeType: string;
  /** The stored audio, when the server made its own copy; null while the recording waits for the browser's. */
  audio: { format: string; sizeBytes: number; durationSeconds: number } | null;
  durationSeconds: number | null;
  /** The patient's consent; null: not documented. */
  consent: ConsentRecord | null;
};

export async function insertLiveRecording(trx: Transaction<Database>, values: NewLiveRecording) {
  return trx
    .insertInto("recordings")
    .values({
      owner_id: values.ownerId,
      storage_key: values.audioKey,
      original_filename: values.originalFilename,
      display_name: values.displayName,
      tags: JSON.stringify(values.tags),
      language_code: values.language,
      template_id: values.templateId,
      transcription_mode: values.mode,
      transcription_status: values.transcriptKey ? "completed" : "pending",
      transcript_key: values.transcriptKey,
      upload_status: values.audio ? "ready" : "awaiting_upload",
      // The recorder's type, as an upload keeps the type it declared.
      declared_type: values.originalMimeType,
      original_mime_type: values.originalMimeType,
      created_via: LIVE_CREATED_VIA,
      source_type: LIVE_SOURCE_TYPE,
      save_fingerprint: values.fingerprint,
      audio_format: values.audio?.format ?? null,
      size_bytes: values.audio?.sizeBytes ?? null,
      duration_seconds: values.audio?.durationSeconds ?? values.durationSeconds,
      ...consentColumns(values.consent),
      updated_at: new Date(),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
}

export async function insertLiveContextText(
  trx: Transaction<Database>,
  args: { ownerId: string; recordingId: string; text: string },
) {
  await trx
    .insertInto("recording_context")
    .values({ owner_id: args.ownerId, recording_id: args.recordingId, kind: "text", text: args.text })
    .execute();
}

/** New audio replaced a live recording's: playable, with the stored file's own figures. */
export async function setLiveAudio(args: {
  ownerId: string;
  id: string;
  format: string;
  sizeBytes: number;
  durationSeconds: number;
}) {
  await getDb()
    .updateTable("recordings")
    .set({
      upload_status: "ready",
      audio_format: args.format,
      size_bytes: args.sizeBytes,
      duration_seconds: args.durationSeconds,
      updated_at: new Date(),
    })
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.id)
    .where("created_via", "=", LIVE_CREATED_VIA)
    .execute();
}
