import { sql, type Kysely } from "kysely";

// Live recording and dictation (issue 7, ADR 0013). A live session lives in the database, not in a process:
// whichever app instance receives a buffer of audio or serves the event stream, it reads and writes these
// rows, so the HTTP fallback works when consecutive requests reach different instances, and a reload, a crash
// or a network drop loses nothing already streamed.
//
// - live_sessions: one per recording or dictation. `status`: idle (created, or a run ended by an error),
//   running (an engine run is open; `runner_instance` holds it until `runner_lease_until`), ending (EndOfStream
//   received, waiting for the engine's last finals), paused (the run ended normally; continue, save or
//   discard), saved, discarded. `buffers`/`samples` count what the server holds.
// - live_audio: every 4096-sample buffer as it arrives, numbered from 1 without gaps (the primary key makes a
//   re-sent buffer harmless).
// - live_messages: what the session published (finals, partials, warnings, errors, end of transcript), numbered
//   in order; server-sent events resume from a number, and saving reads the finals.
// - recordings gains SPEC §3's "Live-recording audio metadata" as columns of its own: `created_via` (null for an
//   upload, 'realtime' for a saved live recording — the daily stale-slot sweep and the upload check skip those),
//   `source_type` and the recorder's `original_mime_type`. `save_fingerprint` makes a save idempotent: a client
//   retry of the same payload finds the first save, and the unique index stops a second row even if two saves
//   race past the advisory lock (save-rows.server.ts).

export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("live_sessions")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('recording', 'dictation')`))
    .addColumn("language", "text", (c) => c.notNull().check(sql`language in ('de', 'en')`))
    .addColumn("engine", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) =>
      c
        .notNull()
        .defaultTo("idle")
        .check(sql`status in ('idle', 'running', 'ending', 'paused', 'saved', 'discarded')`),
    )
    .addColumn("transport", "text")
    .addColumn("buffers", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("samples", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("end_seq", "integer")
    .addColumn("run_started_samples", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("runner_instance", "text")
    .addColumn("runner_lease_until", "timestamptz")
    .addColumn("last_message_n", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("error_type", "text")
    .addColumn("error_reason", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("live_sessions_owner_status")
    .on("live_sessions")
    .columns(["owner_id", "status", "created_at"])
    .execute();

  await db.schema
    .createTable("live_audio")
    .addColumn("session_id", "uuid", (c) => c.notNull().references("live_sessions.id").onDelete("cascade"))
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("samples", "integer", (c) => c.notNull())
    .addColumn("pcm", "bytea", (c) => c.notNull())
    .addColumn("received_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("live_audio_pkey", ["session_id", "seq"])
    .execute();

  await db.schema
    .createTable("live_messages")
    .addColumn("session_id", "uuid", (c) => c.notNull().references("live_sessions.id").onDelete("cascade"))
    .addColumn("n", "integer", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("message", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("live_messages_pkey", ["session_id", "n"])
    .execute();

  await db.schema
    .alterTable("recordings")
    .addColumn("created_via", "text", (c) => c.check(sql`created_via in ('realtime')`))
    .addColumn("source_type", "text", (c) => c.check(sql`source_type in ('realtime_recording')`))
    .addColumn("original_mime_type", "text")
    .addColumn("save_fingerprint", "text")
    .execute();
  await db.schema
    .createIndex("recordings_owner_save_fingerprint")
    .on("recordings")
    .columns(["owner_id", "save_fingerprint"])
    .unique()
    .where(sql.ref("save_fingerprint"), "is not", null)
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropIndex("recordings_owner_save_fingerprint").ifExists().execute();
  await db.schema
    .alterTable("recordings")
    .dropColumn("save_fingerprint")
    .dropColumn("original_mime_type")
    .dropColumn("source_type")
    .dropColumn("created_via")
    .execute();
  await db.schema.dropTable("live_messages").execute();
  await db.schema.dropTable("live_audio").execute();
  await db.schema.dropTable("live_sessions").execute();
}
