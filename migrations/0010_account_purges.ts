import { sql, type Kysely } from "kysely";

// Account deletion (issue 9 "Data lifecycle"). Append-only (STYLE.md §15).
// A deleted account's rows go at once (every owned table cascades from users). Its storage objects are removed
// right after, and again by the minute sweep for a while: work in flight when the account went (a transcription
// storing its JSON, an upload completing) can still write under the old owner's prefixes. account_purges keeps
// the owner id — no name, no address — until the prefixes have stayed empty past that window.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("account_purges")
    .addColumn("owner_id", "uuid", (c) => c.primaryKey())
    .addColumn("requested_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("checked_at", "timestamptz")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("account_purges").execute();
}
