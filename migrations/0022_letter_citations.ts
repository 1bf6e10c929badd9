import { sql, type Kysely } from "kysely";

// The sources a language model named for the sentences it wrote (issue 24: structured output with sources). A
// sentence is named as a confirmation names it — by a hash of its normalised wording, never by its text — so the
// citation belongs to that wording wherever it stands in the letter's versions and proposals, and lapses when the
// doctor rewrites it. The ids are transcript segment ids ("t3p0") as the model gave them: the model's word, which
// the checker verifies each time it shows them and never stores a verdict on. The latest citation of a wording wins.
// Numbered 0022: 0020 was never used.
export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("letter_citations")
    .addColumn("letter_id", "uuid", (c) => c.notNull().references("letters.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("wording_hash", "text", (c) => c.notNull())
    .addColumn("segment_ids", "jsonb", (c) => c.notNull())
    .addColumn("cited_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("letter_citations_pkey", ["letter_id", "wording_hash"])
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("letter_citations").ifExists().execute();
}
