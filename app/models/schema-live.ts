import type { ColumnType, Generated } from "kysely";
import type { ConsentGivenBy, ConsentKind } from "./consent-rules";
import type { CreatedAt, Timestamp } from "./schema";

// Hand-kept types of migration 0007's tables (ADR 0013): live recording and dictation sessions, their audio
// buffers and the messages they published. Part of `Database` in schema.ts.

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
