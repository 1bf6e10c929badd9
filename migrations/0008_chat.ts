import { sql, type Kysely } from "kysely";

// Chat (issue 8, SPEC §2 "Chat", §4 "Chat"). A user has one conversation: their messages and the PDF context
// they attached, kept on the server so the screen works without JavaScript and on any app instance.
//
// - chat_messages: the conversation in order (`n`, since both messages of a turn share one transaction time).
//   An assistant message is `pending` while its answer is being written, then `done` or `failed` (the screen
//   shows SPEC §8's apology for a failed one). The partial unique index allows one pending answer per user: a
//   second send while one is being written is refused, even when two requests race. `updated_at` is the
//   writer's heartbeat; a pending answer whose heartbeat stopped (its process died) counts as failed.
//   `context_truncated` marks an answer for which the PDF text had to be shortened to fit the model's context.
// - chat_context: text extracted from the PDFs attached to the conversation (never the PDFs themselves),
//   prefixed to each question (SPEC §7 notes).
// Both are deleted by "clear chat", and by the minute sweep CHAT_RETENTION_HOURS after the last message.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("chat_messages")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("n", "bigserial", (c) => c.notNull())
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('user', 'assistant')`))
    .addColumn("content", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("status", "text", (c) =>
      c
        .notNull()
        .defaultTo("done")
        .check(sql`status in ('pending', 'done', 'failed')`),
    )
    .addColumn("context_truncated", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("chat_messages_owner_n").on("chat_messages").columns(["owner_id", "n"]).execute();
  await db.schema
    .createIndex("chat_messages_one_pending")
    .on("chat_messages")
    .column("owner_id")
    .unique()
    .where(sql.ref("status"), "=", "pending")
    .execute();

  await db.schema
    .createTable("chat_context")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("file_name", "text", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("chat_context_owner_created")
    .on("chat_context")
    .columns(["owner_id", "created_at"])
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("chat_context").execute();
  await db.schema.dropTable("chat_messages").execute();
}
