import type { ColumnType, Generated } from "kysely";
import type { ConsentGivenBy, ConsentKind } from "./consent-rules";
import type { CreatedAt, Timestamp, TranscriptionMode, TranscriptionStatus, LetterStatus } from "./schema";

// Hand-kept type of the recordings table (migrations 0001, 0003, 0004, 0007, 0011, 0013, 0015). Part of `Database` in schema.ts.

export interface RecordingsTable {
  id: Generated<string>;
  owner_id: string;
  storage_key: string;
  original_filename: string;
  display_name: string | null;
  tags: ColumnType<string[], string | undefined, string>;
  language_code: string;
  template_id: string | null;
  transcription_mode: ColumnType<TranscriptionMode, TranscriptionMode | undefined, TranscriptionMode>;
  transcription_status: ColumnType<TranscriptionStatus, TranscriptionStatus | undefined, TranscriptionStatus>;
  transcript_key: string | null;
  medical_letter_status: ColumnType<LetterStatus, LetterStatus | undefined, LetterStatus>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  upload_status: ColumnType<"awaiting_upload" | "ready", "awaiting_upload" | "ready" | undefined>;
  declared_type: string | null;
  size_bytes: ColumnType<string | null, number | null | undefined, number | null>;
  duration_seconds: number | null;
  audio_format: string | null;
  multipart_upload_id: string | null;
  multipart_part_size: number | null;
  multipart_part_count: number | null;
  declared_size: ColumnType<string | null, number | null | undefined, number | null>;
  /** Migration 0007: null for an upload, "realtime" for a saved live recording (SPEC §3). */
  created_via: "realtime" | null;
  source_type: "realtime_recording" | null;
  /** The recorder's MIME type of a live recording, as the browser reported it. */
  original_mime_type: string | null;
  /** A live save's payload fingerprint: a retried save finds the first one (unique per owner). */
  save_fingerprint: string | null;
  /** Migration 0011: when the retention sweep deleted the audio (the transcript and letter stay). */
  audio_deleted_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Migration 0013: the timestamp inside the storage key that numbers the recording (SPEC §3), made by the database. */
  key_stamp: ColumnType<string, never, never>;
  /** Migration 0015: the patient's consent to the recording (consent-rules.ts); all null when not documented. */
  consent_kind: ConsentKind | null;
  consent_given_by: ConsentGivenBy | null;
  consent_confirmed_by: string | null;
  consent_confirmed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}
