import { sql, type Kysely } from "kysely";

// The doctor's own vocabulary (issue 24, ADR 0031). Append-only (STYLE.md §15).
// A term the doctor corrected a transcript to joins it (`content`, at most 60 characters as the built-in list's), with
// what the engine had heard instead as `sounds_like` (at most 3, as the built-in list's misheard variants). The speech
// engines receive these with the built-in list for the same language. `content_key` is the term folded to lower case,
// so one term is one row per user and language; at most 500 rows per user, enforced by the service under a lock on the
// user's row.
export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("user_vocabulary")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("language", "text", (c) => c.notNull().check(sql`language in ('de', 'en')`))
    .addColumn("content", "text", (c) => c.notNull().check(sql`char_length(content) between 1 and 60`))
    .addColumn("content_key", "text", (c) => c.notNull())
    .addColumn("sounds_like", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("user_vocabulary_owner_term_unique", ["owner_id", "language", "content_key"])
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("user_vocabulary").ifExists().execute();
}
