import { sql, type Kysely } from "kysely";

// Recordings (issue 4): the upload lifecycle and the additional context.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .alterTable("recordings")
    // A slot is made with the upload URL; only a checked upload becomes a listed recording.
    .addColumn("upload_status", "text", (c) =>
      c
        .notNull()
        .defaultTo("ready")
        .check(sql`upload_status in ('awaiting_upload', 'ready')`),
    )
    .addColumn("declared_type", "text")
    .addColumn("size_bytes", "bigint")
    .addColumn("duration_seconds", "double precision")
    .addColumn("audio_format", "text")
    .execute();

  await db.schema
    .createTable("recording_context")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("recording_id", "uuid", (c) => c.notNull().references("recordings.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('text', 'pdf', 'patient_record')`))
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("source_name", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("recording_context_recording_idx")
    .on("recording_context")
    .column("recording_id")
    .execute();

  // PDFs uploaded as context before extraction: owned, short-lived objects.
  await db.schema
    .createTable("context_uploads")
    .addColumn("storage_key", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("file_name", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("context_uploads").ifExists().execute();
  await db.schema.dropTable("recording_context").ifExists().execute();
  await db.schema
    .alterTable("recordings")
    .dropColumn("audio_format")
    .dropColumn("duration_seconds")
    .dropColumn("size_bytes")
    .dropColumn("declared_type")
    .dropColumn("upload_status")
    .execute();
}
