import type { ColumnType, Generated, Insertable, Selectable } from "kysely";
import type { AccountPurgesTable } from "./schema-account";
import type { RecordingsTable } from "./schema-recordings";
import type { ChatContextTable, ChatMessagesTable } from "./schema-chat";
import type { LiveAudioTable, LiveMessagesTable, LiveSessionsTable } from "./schema-live";

export type { LiveSessionStatus } from "./schema-live";

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

export interface TranscriptionJobsTable {
  id: Generated<string>;
  recording_id: string;
  owner_id: string;
  job_name: string;
  status: ColumnType<TranscriptionJobStatus, TranscriptionJobStatus | undefined, TranscriptionJobStatus>;
  attempts: Generated<number>;
  lease_until: Timestamp | null;
  error_key: string | null;
  error_detail: string | null;
  engine: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  started_at: Timestamp | null;
  engine_called_at: Timestamp | null;
  engine_returned_at: Timestamp | null;
  finished_at: Timestamp | null;
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

export interface LetterJobsTable {
  id: Generated<string>;
  recording_id: string;
  owner_id: string;
  job_name: string;
  kind: "create" | "redo";
  template_id: string;
  status: ColumnType<LetterJobStatus, LetterJobStatus | undefined, LetterJobStatus>;
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
  letter_versions: LetterVersionsTable;
  letter_jobs: LetterJobsTable;
  letter_proposals: LetterProposalsTable;
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
