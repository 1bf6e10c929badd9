import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./schema";

// Hand-kept types of migration 0008's tables: a user's chat conversation and its PDF context. Part of
// `Database` in schema.ts.

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
