import { type Kysely } from "kysely";

// A letter marked final ("Freigegeben", issue 22). Append-only (STYLE.md §15).
// letters.released_at / released_by: when and by whom the doctor released the current version; a new version clears
// both (what was released is no longer the letter). From released_at on Skribent no longer needs the recording's
// audio: the retention sweep deletes it AUDIO_RETENTION_DAYS later (and transcript and letter after their own periods,
// when the operator sets them).
export async function up(db: Kysely<unknown>) {
  await db.schema
    .alterTable("letters")
    .addColumn("released_at", "timestamptz")
    .addColumn("released_by", "text")
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.alterTable("letters").dropColumn("released_by").dropColumn("released_at").execute();
}
