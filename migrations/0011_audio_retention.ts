import { type Kysely } from "kysely";

// Audio retention (issue 9 "Data lifecycle"). Append-only (STYLE.md §15).
// recordings.audio_deleted_at: when the retention sweep deleted the recording's audio (AUDIO_RETENTION_DAYS after
// its letter was last changed, once the letter is completed). The transcript and the letter stay; the key stays
// the recording's name (SPEC §7 calls it s3_key), but no object is behind it any more.

export async function up(db: Kysely<unknown>) {
  await db.schema.alterTable("recordings").addColumn("audio_deleted_at", "timestamptz").execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.alterTable("recordings").dropColumn("audio_deleted_at").execute();
}
