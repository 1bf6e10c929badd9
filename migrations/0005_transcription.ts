import { sql, type Kysely } from "kysely";

// Transcription (issue 5): one job and at most one transcript per recording, both enforced by unique
// constraints. The job row is the truth about a run (status, lease, attempts); pg-boss only wakes a
// worker. A running job holds a lease the worker renews; a lapsed lease means the worker died, and the
// sweep queues the job again.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("transcription_jobs")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("recording_id", "uuid", (c) => c.notNull().unique().references("recordings.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("job_name", "text", (c) => c.notNull().unique())
    .addColumn("status", "text", (c) =>
      c
        .notNull()
        .defaultTo("queued")
        .check(sql`status in ('queued', 'running', 'completed', 'failed')`),
    )
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("lease_until", "timestamptz")
    .addColumn("error_key", "text")
    .addColumn("error_detail", "text")
    .addColumn("engine", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("started_at", "timestamptz")
    .addColumn("engine_called_at", "timestamptz")
    .addColumn("engine_returned_at", "timestamptz")
    .addColumn("finished_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("transcription_jobs_lease_idx")
    .on("transcription_jobs")
    .columns(["status", "lease_until"])
    .execute();

  await db.schema
    .createTable("transcripts")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("recording_id", "uuid", (c) => c.notNull().unique().references("recordings.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("storage_key", "text", (c) => c.notNull().unique())
    .addColumn("language_code", "text", (c) => c.notNull())
    .addColumn("engine", "text", (c) => c.notNull())
    .addColumn("audio_seconds", "double precision", (c) => c.notNull())
    .addColumn("word_count", "integer", (c) => c.notNull())
    .addColumn("speaker_count", "integer", (c) => c.notNull())
    .addColumn("tags", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("transcripts_owner_idx").on("transcripts").columns(["owner_id", "created_at"]).execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("transcripts").ifExists().execute();
  await db.schema.dropTable("transcription_jobs").ifExists().execute();
}
