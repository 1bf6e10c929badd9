import { sql, type Kysely } from "kysely";

// Settings › "Aktive Sitzungen" (ASVS 5.0 7.5.2): a user sees their sessions and ends the others. Append-only
// (STYLE.md §15). `created_at` (when it started) and `last_seen_at` are there since 0001.
// - public_id: what the page names a session by. id_hash is the hash of the cookie's secret and never leaves the
//   server; a random uuid says nothing about it. The default gives rows that exist already one too. Text, not
//   uuid: whatever a form posts is compared as it is, so a malformed id is simply not one of the user's (404).
// - device_label: a coarse "Firefox · Windows" derived at sign-in (app/services/accounts/device-label.server.ts), never the
//   User-Agent itself, which is close to identifying. Null for rows from before and for unknown browsers.
export async function up(db: Kysely<unknown>) {
  await db.schema
    .alterTable("sessions")
    .addColumn("public_id", "text", (c) => c.notNull().defaultTo(sql`gen_random_uuid()::text`))
    .addColumn("device_label", "text")
    .execute();
  await db.schema.createIndex("sessions_public_id_key").unique().on("sessions").column("public_id").execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropIndex("sessions_public_id_key").execute();
  await db.schema.alterTable("sessions").dropColumn("device_label").dropColumn("public_id").execute();
}
