import type { ColumnType, Generated, Insertable, Selectable } from "kysely";
import type { ConsentGivenBy, ConsentKind } from "./consent-rules";

// Hand-kept types of the tables in migrations/ (STYLE.md §2). Statuses are the
// exact SPEC §4 unions.

export const transcriptionStatuses = ["pending", "processing", "completed", "failed"] as const;
export type TranscriptionStatus = (typeof transcriptionStatuses)[number];
export const letterStatuses = ["pending", "processing", "completed", "failed", "structure_error"] as const;
export type LetterStatus = (typeof letterStatuses)[number];
export const transcriptionModes = ["transcript", "transcript_and_letter"] as const;
export type TranscriptionMode = (typeof transcriptionModes)[number];

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface UsersTable {
  id: Generated<string>;
  issuer: string;
  subject: string;
  email: string | null;
  email_verified: Generated<boolean>;
  name: string | null;
  locale: string | null;
  created_at: CreatedAt;
  last_login_at: Timestamp;
  rag_agreed: Generated<boolean>;
  rag_agreed_at: Date | null;
  /** Migration 0009: the configured organisation claim at the last sign-in (null: not configured or absent). */
  org_claim: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
}

export interface SessionsTable {
  /** sha256 of the cookie's session id: a copy of the table does not hand out sessions. */
  id_hash: string;
  user_id: string;
  created_at: CreatedAt;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  id_token: string | null;
  /** Migration 0014: what Settings › "Aktive Sitzungen" names the session by (id_hash never leaves the server). */
  public_id: Generated<string>;
  /** Migration 0014: "Firefox · Windows", derived at sign-in; never the User-Agent itself. */
  device_label: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AuditEventsTable {
  id: Generated<string>;
  at: CreatedAt;
  user_id: string | null;
  action: string;
  entity_type: string | null;
  entity_id: string | null;
  outcome: "success" | "failure" | "denied";
  ip: string | null;
  request_id: string | null;
}

export interface RateLimitsTable {
  bucket: string;
  window_start: Date;
  hits: number;
}

export interface UsageEventsTable {
  id: Generated<string>;
  at: CreatedAt;
  user_id: string;
  endpoint: string;
  units: ColumnType<string, number | string, number | string>;
  unit: string;
  cost_usd: ColumnType<string, number | string, number | string>;
}

export interface PendingPostsTable {
  id: string;
  user_id: string;
  path: string;
  body: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

export interface RecordingContextTable {
  id: Generated<string>;
  recording_id: string;
  owner_id: string;
  kind: "text" | "pdf" | "patient_record";
  text: string;
  source_name: string | null;
  created_at: CreatedAt;
}

export interface ContextUploadsTable {
  storage_key: string;
  owner_id: string;
  file_name: string;
  created_at: CreatedAt;
}

/** The columns of a recording's job row, one kind of job a table (transcription_jobs, letter_jobs). */
export interface RecordingJobColumns<Status extends string> {
  id: Generated<string>;
  recording_id: string;
  owner_id: string;
  job_name: string;
  status: ColumnType<Status, Status | undefined, Status>;
  attempts: Generated<number>;
  lease_until: Timestamp | null;
  error_key: string | null;
  error_detail: string | null;
  engine: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export interface TranscriptionJobsTable extends RecordingJobColumns<TranscriptionJobStatus> {
  engine_called_at: Timestamp | null;
  engine_returned_at: Timestamp | null;
}

export type TranscriptionJobStatus = "queued" | "running" | "completed" | "failed";

export interface TranscriptsTable {
  id: Generated<string>;
  recording_id: string;
  owner_id: string;
  storage_key: string;
  language_code: string;
  engine: string;
  audio_seconds: number;
  word_count: number;
  speaker_count: number;
  tags: ColumnType<string[], string | undefined, string>;
  created_at: CreatedAt;
}

/** What a transcript version changed (migration 0017): the change itself, applied in order to the recognised one. */
export type TranscriptVersionKind = "correction" | "confirmation" | "speakers";

export interface TranscriptVersionsTable {
  id: Generated<string>;
  transcript_id: string;
  owner_id: string;
  version: number;
  kind: TranscriptVersionKind;
  /** A TranscriptChange (app/services/transcription/corrections.ts), as JSON. */
  change: ColumnType<unknown, string, never>;
  author_id: string | null;
  created_at: CreatedAt;
}

/** The doctor's own vocabulary (migration 0018): terms corrected to, with what the engine heard instead. */
export interface UserVocabularyTable {
  id: Generated<string>;
  owner_id: string;
  language: "de" | "en";
  content: string;
  content_key: string;
  sounds_like: ColumnType<string[], string | undefined, string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface LettersTable {
  id: Generated<string>;
  owner_id: string;
  recording_id: string | null;
  storage_key: string;
  template_id: string | null;
  language_code: string;
  current_version: Generated<number>;
  tags: ColumnType<string[], string | undefined, string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Migration 0016: the doctor released the current version ("Freigegeben"); a new version clears it. */
  released_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  released_by: string | null;
}

export type LetterVersionKind = "generated" | "edited" | "refined" | "restored" | "redo";
/** SPEC §3: plain text, or { structured_output: [{ "<section title>": "<text>" }, …] }. */
export type StoredLetterContent = string | { structured_output: Array<Record<string, string>> };
type JsonContent = ColumnType<StoredLetterContent, string, string>;

export interface LetterVersionsTable {
  id: Generated<string>;
  letter_id: string;
  owner_id: string;
  version: number;
  kind: LetterVersionKind;
  author_id: string | null;
  template_id: string | null;
  content: JsonContent;
  note: string | null;
  created_at: CreatedAt;
}

export type LetterJobStatus = "queued" | "running" | "completed" | "failed";

export type LetterJobKind = "create" | "redo" | "regenerate";

export interface LetterJobsTable extends RecordingJobColumns<LetterJobStatus> {
  kind: LetterJobKind;
  template_id: string;
  // A regeneration's (migration 0021, ADR 0032); null for create and redo.
  scope: "all" | "section" | null;
  section_title: string | null;
  base_version: number | null;
  query: string | null;
  proposal_id: string | null;
}

export interface LetterProposalsTable {
  id: Generated<string>;
  letter_id: string;
  owner_id: string;
  base_version: number;
  scope: "all" | "full_text" | "section";
  section_title: string | null;
  query: string;
  content: JsonContent;
  status: ColumnType<"open" | "accepted" | "rejected", "open" | undefined, "accepted" | "rejected">;
  created_at: CreatedAt;
  decided_at: Timestamp | null;
}

/** A doctor's confirmation of one evidence flag on one wording of a sentence (migration 0019, issue 24). */
export interface LetterConfirmationsTable {
  id: Generated<string>;
  letter_id: string;
  owner_id: string;
  sentence_hash: string;
  flag_kind: string;
  confirmed_at: CreatedAt;
}

export interface LetterCitationsTable {
  letter_id: string;
  owner_id: string;
  wording_hash: string;
  /** Segment ids as the model named them (migration 0022). */
  segment_ids: ColumnType<string[], string, string>;
  cited_at: Timestamp;
}

/** Migration 0024: what the export dialog was given, kept with the letter when the doctor chose so. */
export interface LetterExportDetailsTable {
  letter_id: string;
  owner_id: string;
  recipient_name: string;
  recipient_address: ColumnType<string[], string, string>;
  patient_name: string;
  patient_birth_date: string | null;
  subject: string;
  letter_date: string | null;
  updated_at: Timestamp;
}

export const letterheadScopes = ["user", "practice"] as const;
export type LetterheadScope = (typeof letterheadScopes)[number];
export const letterheadLogoTypes = ["image/png", "image/svg+xml"] as const;
export type LetterheadLogoType = (typeof letterheadLogoTypes)[number];

/** Migration 0023: one letterhead per user (scope 'user') and at most one for the practice (owner_id null). */
export interface LetterheadsTable {
  id: Generated<string>;
  scope: LetterheadScope;
  owner_id: string | null;
  practice_name: Generated<string>;
  /** One line per doctor, with title. */
  doctors: ColumnType<string[], string | undefined, string>;
  street: Generated<string>;
  postal_code: Generated<string>;
  city: Generated<string>;
  phone: Generated<string>;
  email: Generated<string>;
  bsnr: string | null;
  lanr: string | null;
  /** Empty: the letter's language's closing formula. */
  closing: Generated<string>;
  /** Empty: the signing user's name. */
  signature: ColumnType<string[], string | undefined, string>;
  logo: Uint8Array | null;
  logo_mime: LetterheadLogoType | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SavedPromptsTable {
  id: Generated<string>;
  owner_id: string;
  title: string;
  prompt_text: string;
  created_at: CreatedAt;
}

export type StoredElement = { id: string; name: string; description: string; isProtected: boolean };
type Elements = ColumnType<StoredElement[], string, string>;

export interface UserTemplateCollectionTable {
  user_id: string;
  template_id: string;
  language_code: "de-DE" | "en-GB";
  state: "added" | "removed";
  updated_at: Timestamp;
}

export interface UserStructuresTable {
  user_id: string;
  template_id: string;
  language_code: "de-DE" | "en-GB";
  elements: Elements;
  prompt: string;
  updated_at: Timestamp;
}

export interface CustomTemplatesTable {
  owner_id: string;
  template_id: string;
  language_code: "de-DE" | "en-GB";
  name: string;
  description: Generated<string>;
  elements: Elements;
  prompt: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  audit_events: AuditEventsTable;
  rate_limits: RateLimitsTable;
  usage_events: UsageEventsTable;
  pending_posts: PendingPostsTable;
  recordings: RecordingsTable;
  letters: LettersTable;
  user_template_collection: UserTemplateCollectionTable;
  user_structures: UserStructuresTable;
  custom_templates: CustomTemplatesTable;
  recording_context: RecordingContextTable;
  context_uploads: ContextUploadsTable;
  transcription_jobs: TranscriptionJobsTable;
  transcripts: TranscriptsTable;
  transcript_versions: TranscriptVersionsTable;
  user_vocabulary: UserVocabularyTable;
  letter_versions: LetterVersionsTable;
  letter_jobs: LetterJobsTable;
  letter_proposals: LetterProposalsTable;
  letter_confirmations: LetterConfirmationsTable;
  letter_citations: LetterCitationsTable;
  letter_export_details: LetterExportDetailsTable;
  letterheads: LetterheadsTable;
  saved_prompts: SavedPromptsTable;
  live_sessions: LiveSessionsTable;
  live_audio: LiveAudioTable;
  live_messages: LiveMessagesTable;
  chat_messages: ChatMessagesTable;
  chat_context: ChatContextTable;
  account_purges: AccountPurgesTable;
}

export type User = Selectable<UsersTable>;
export type NewAuditEvent = Insertable<AuditEventsTable>;

// Hand-kept type of the recordings table (migrations 0001, 0003, 0004, 0007, 0011, 0013, 0015).

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

// Hand-kept types of migration 0007's tables (ADR 0013): live recording and dictation sessions, their audio
// buffers and the messages they published.

export type LiveSessionStatus = "idle" | "running" | "ending" | "paused" | "saved" | "discarded";

/** Migration 0007: a live recording or dictation, kept in the database so any instance can serve it. */
export interface LiveSessionsTable {
  id: Generated<string>;
  owner_id: string;
  kind: "recording" | "dictation";
  language: "de" | "en";
  engine: string;
  status: ColumnType<LiveSessionStatus, LiveSessionStatus | undefined, LiveSessionStatus>;
  transport: string | null;
  buffers: Generated<number>;
  samples: ColumnType<string, number | undefined, number | string>;
  end_seq: number | null;
  run_started_samples: ColumnType<string, number | undefined, number | string>;
  runner_instance: string | null;
  runner_lease_until: Timestamp | null;
  last_message_n: Generated<number>;
  error_type: string | null;
  error_reason: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Migration 0012: how far recognition reached (samples on the session's time line; buffers wholly). */
  recognised_samples: ColumnType<string, number | undefined, number | string>;
  recognised_seq: Generated<number>;
  /** Migration 0012: the session's audio up to here has been metered. */
  metered_samples: ColumnType<string, number | undefined, number | string>;
  /** Migration 0015: the patient's consent, confirmed before the recording's first buffer (consent-rules.ts). */
  consent_kind: ConsentKind | null;
  consent_given_by: ConsentGivenBy | null;
  consent_confirmed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface LiveAudioTable {
  session_id: string;
  seq: number;
  samples: number;
  pcm: Buffer;
  received_at: CreatedAt;
}

export interface LiveMessagesTable {
  session_id: string;
  n: number;
  kind: string;
  message: ColumnType<unknown, string, string>;
  created_at: CreatedAt;
}

// Hand-kept types of migration 0008's tables: a user's chat conversation and its PDF context.

export const chatRoles = ["user", "assistant"] as const;
export type ChatMessageRole = (typeof chatRoles)[number];
/** An assistant message is pending while its answer is being written (SPEC §4 "sending (thinking)"). */
export type ChatMessageStatus = "pending" | "done" | "failed";

export interface ChatMessagesTable {
  id: Generated<string>;
  /** The order of the conversation (bigserial). */
  n: Generated<string>;
  owner_id: string;
  role: ChatMessageRole;
  content: Generated<string>;
  status: ColumnType<ChatMessageStatus, ChatMessageStatus | undefined, ChatMessageStatus>;
  context_truncated: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ChatContextTable {
  id: Generated<string>;
  owner_id: string;
  file_name: string;
  text: string;
  created_at: CreatedAt;
}

// Hand-kept type of migration 0010's table: deleted accounts whose storage prefixes the sweep still watches.

export interface AccountPurgesTable {
  /** The deleted user's id: the owner segment of its storage keys. */
  owner_id: string;
  requested_at: CreatedAt;
  /** When a pass last found the prefixes empty. */
  checked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  attempts: Generated<number>;
}
