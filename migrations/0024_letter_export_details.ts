import { sql, type Kysely } from "kysely";

// What a doctor typed into a letter's export dialog (issue 25) — recipient, patient line, subject, date — kept with
// the letter only when the doctor ticks "keep with this letter", so the next export of that letter starts from it.
// One row per letter, replaced on each kept export, gone with the letter. Numbered 0024: 0023 is the letterheads'.
export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("letter_export_details")
    .addColumn("letter_id", "uuid", (c) => c.primaryKey().references("letters.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("recipient_name", "text", (c) => c.notNull())
    // One line each (street, postal code and city, …), at most four.
    .addColumn("recipient_address", "jsonb", (c) => c.notNull())
    .addColumn("patient_name", "text", (c) => c.notNull())
    // ISO dates as text (yyyy-mm-dd): a calendar date, never shifted by a time zone on the way in or out.
    .addColumn("patient_birth_date", "text")
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("letter_date", "text")
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("letter_export_details").ifExists().execute();
}
