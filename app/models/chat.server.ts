import { sql, type Kysely, type Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database } from "./schema";
import type { ChatMessageStatus } from "./schema";

// A user's chat conversation (migration 0008): messages in order and the PDF context. Every query is scoped by
// owner; the sweep alone deletes across owners, by age.

type Db = Kysely<Database> | Transaction<Database>;

export async function listChatMessages({ ownerId }: { ownerId: string }, db: Db = getDb()) {
  return db
    .selectFrom("chat_messages")
    .where("owner_id", "=", ownerId)
    .select(["id", "role", "content", "status", "context_truncated", "created_at", "updated_at"])
    .orderBy("n", "asc")
    .execute();
}

export type ChatMessageRow = Awaited<ReturnType<typeof listChatMessages>>[number];

export async function listChatContext({ ownerId }: { ownerId: string }, db: Db = getDb()) {
  return db
    .selectFrom("chat_context")
    .where("owner_id", "=", ownerId)
    .select(["id", "file_name", "text", "created_at"])
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .execute();
}

/** The context's file names and whether each gave text, without the text itself (what the screen shows). */
export async function listChatContextNames({ ownerId }: { ownerId: string }) {
  return getDb()
    .selectFrom("chat_context")
    .where("owner_id", "=", ownerId)
    .select(["id", "file_name", sql<boolean>`length(trim(text)) > 0`.as("readable")])
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .execute();
}

/** The pending answer of a user, if one is being written (at most one: a partial unique index). */
export async function findPendingAnswer(db: Db, { ownerId }: { ownerId: string }) {
  return db
    .selectFrom("chat_messages")
    .where("owner_id", "=", ownerId)
    .where("status", "=", "pending")
    .select(["id", "updated_at"])
    .executeTakeFirst();
}

/** Pending answers whose writer stopped its heartbeat before `before` (its process died): failed. */
export async function failStalePendingAnswers(db: Db, args: { before: Date; ownerId?: string }) {
  let query = db
    .updateTable("chat_messages")
    .set({ status: "failed", updated_at: sql`now()` })
    .where("status", "=", "pending")
    .where("updated_at", "<", args.before);
  if (args.ownerId) query = query.where("owner_id", "=", args.ownerId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A question and its pending answer, in one transaction; the caller has checked nothing is pending. */
export async function insertChatTurn(trx: Transaction<Database>, args: { ownerId: string; question: string }) {
  await trx
    .insertInto("chat_messages")
    .values({ owner_id: args.ownerId, role: "user", content: args.question, status: "done" })
    .execute();
  return trx
    .insertInto("chat_messages")
    .values({ owner_id: args.ownerId, role: "assistant", status: "pending" })
    .returning(["id"])
    .executeTakeFirstOrThrow();
}

export async function insertChatContext(
  db: Db,
  args: { ownerId: string; files: Array<{ name: string; text: string }> },
) {
  if (args.files.length === 0) return;
  await db
    .insertInto("chat_context")
    .values(args.files.map((file) => ({ owner_id: args.ownerId, file_name: file.name, text: file.text })))
    .execute();
}

/** The writer's heartbeat; false once the answer is no longer pending (cleared, or failed by a sweep). */
export async function touchPendingAnswer(args: { ownerId: string; id: string }) {
  const result = await getDb()
    .updateTable("chat_messages")
    .set({ updated_at: sql`now()` })
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.id)
    .where("status", "=", "pending")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function finishAnswer(args: {
  ownerId: string;
  id: string;
  status: Exclude<ChatMessageStatus, "pending">;
  content: string;
  contextTruncated: boolean;
}) {
  const result = await getDb()
    .updateTable("chat_messages")
    .set({
      status: args.status,
      content: args.content,
      context_truncated: args.contextTruncated,
      updated_at: sql`now()`,
    })
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.id)
    .where("status", "=", "pending")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** SPEC §4 "Clear chat": messages and context go (an answer being written is then stored nowhere). */
export async function clearChat({ ownerId }: { ownerId: string }) {
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const messages = await trx.deleteFrom("chat_messages").where("owner_id", "=", ownerId).executeTakeFirst();
      const context = await trx.deleteFrom("chat_context").where("owner_id", "=", ownerId).executeTakeFirst();
      return { messages: Number(messages.numDeletedRows), context: Number(context.numDeletedRows) };
    });
}

/**
 * Conversations with no message and no PDF attached since `before` (SPEC retention: CHAT_RETENTION_HOURS after
 * the last one), messages and context together. A conversation with an answer still pending stays.
 */
export async function deleteExpiredChats(before: Date) {
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const active = trx
        .selectFrom("chat_messages")
        .select("owner_id")
        .where((eb) => eb.or([eb("created_at", ">=", before), eb("status", "=", "pending")]))
        .union(trx.selectFrom("chat_context").select("owner_id").where("created_at", ">=", before));
      const messages = await trx.deleteFrom("chat_messages").where("owner_id", "not in", active).executeTakeFirst();
      const context = await trx.deleteFrom("chat_context").where("owner_id", "not in", active).executeTakeFirst();
      return { messages: Number(messages.numDeletedRows), context: Number(context.numDeletedRows) };
    });
}
