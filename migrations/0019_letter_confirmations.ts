import { sql, type Kysely } from "kysely";

// A doctor's confirmation of one evidence flag (issue 24): "this statement is right although the checker found no
// support" (or: the dose, the side, the negation is right). Append-only (STYLE.md §15). The sentence is named by a
// hash of its normalised text, never by its text: a confirmation holds for that wording only, so a sentence changed
// afterwards is checked afresh, and nothing of the letter's content sits in this table.
// Numbered 0019: 0017 and 0018 are taken by the transcript corrections of the same issue.
export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("letter_confirmations")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("letter_id", "uuid", (c) => c.notNull().references("letters.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("sentence_hash", "text", (c) => c.notNull())
    // The checker's kind of flag ("unsupported", "dose", "side", …); the door accepts only the kinds it knows.
    .addColumn("flag_kind", "text", (c) => c.notNull())
    .addColumn("confirmed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("letter_confirmations_unique", ["letter_id", "sentence_hash", "flag_kind"])
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("letter_confirmations").ifExists().execute();
}
