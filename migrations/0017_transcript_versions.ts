import { sql, type Kysely } from "kysely";

// Transcript corrections as versions (issue 24, ADR 0031). Append-only (STYLE.md §15).
// The recognised transcript stays the stored object the engine's job wrote (version 1, no row here, never changed).
// Each change the doctor makes — a corrected word, a confirmed one, a speaker named or merged, a paragraph moved to
// another speaker — is one row: version 2, 3, …, the change itself as JSON (`change`), who made it and when. The
// current transcript is the recognised one with the rows applied in order; a save names the version it was made on,
// and the unique (transcript, version) pair lets only one of two concurrent saves on the same version through.
// The rows go with their transcript (a reset, a retention sweep, an account deletion).
export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("transcript_versions")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("transcript_id", "uuid", (c) => c.notNull().references("transcripts.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("version", "integer", (c) => c.notNull().check(sql`version >= 2`))
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('correction', 'confirmation', 'speakers')`))
    .addColumn("change", "jsonb", (c) => c.notNull())
    .addColumn("author_id", "uuid", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("transcript_versions_transcript_version_unique", ["transcript_id", "version"])
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("transcript_versions").ifExists().execute();
}
