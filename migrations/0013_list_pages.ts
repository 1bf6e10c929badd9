import { sql, type Kysely } from "kysely";

// Lists a page at a time in SQL (issue 9: a clinician with 1,000 recordings). Append-only (STYLE.md §15).
// - recordings.key_stamp: SPEC §3's "Recording #n" orders by the timestamp inside the storage key (8 digits, dash,
//   6 digits; a key without one last). Stored once when the row is written instead of a regular expression over
//   every recording on every page view; the index hands the numbering its order without a sort.
export async function up(db: Kysely<unknown>) {
  await sql`
    alter table recordings add column key_stamp text not null
      generated always as (coalesce(substring(storage_key from '[0-9]{8}-[0-9]{6}'), '99999999-999999')) stored`.execute(
    db,
  );
  await sql`
    create index recordings_owner_stamp_idx on recordings (owner_id, key_stamp, created_at desc)
      where upload_status = 'ready'`.execute(db);
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropIndex("recordings_owner_stamp_idx").execute();
  await db.schema.alterTable("recordings").dropColumn("key_stamp").execute();
}
