import { sql, type Kysely } from "kysely";

// Letters (issue 6). A recording has one current letter (unique recording_id); what it said before lives
// in letter_versions, one row per save, accepted refinement, redo or restore, so no clinical text is ever
// overwritten. Generation runs as a letter job with the same claim/lease discipline as transcription
// (migration 0005). A refinement is first a proposal the doctor accepts or rejects. Saved prompts: at most 3
// per user, enforced by the service under a lock on the user's row.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .alterTable("letters")
    .addColumn("current_version", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("tags", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
  await db.schema
    .createIndex("letters_recording_unique")
    .on("letters")
    .column("recording_id")
    .unique()
    .where(sql.ref("recording_id"), "is not", null)
    .execute();

  await db.schema
    .createTable("letter_versions")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("letter_id", "uuid", (c) => c.notNull().references("letters.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("version", "integer", (c) => c.notNull())
    .addColumn("kind", "text", (c) =>
      c.notNull().check(sql`kind in ('generated', 'edited', 'refined', 'restored', 'redo')`),
    )
    .addColumn("author_id", "uuid", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("template_id", "text")
    .addColumn("content", "jsonb", (c) => c.notNull())
    .addColumn("note", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("letter_versions_letter_version_unique", ["letter_id", "version"])
    .execute();

  await db.schema
    .createTable("letter_jobs")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("recording_id", "uuid", (c) => c.notNull().unique().references("recordings.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("job_name", "text", (c) => c.notNull().unique())
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('create', 'redo')`))
    .addColumn("template_id", "text", (c) => c.notNull())
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
    .addColumn("finished_at", "timestamptz")
    .execute();
  await db.schema.createIndex("letter_jobs_lease_idx").on("letter_jobs").columns(["status", "lease_until"]).execute();

  await db.schema
    .createTable("letter_proposals")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("letter_id", "uuid", (c) => c.notNull().references("letters.id").onDelete("cascade"))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("base_version", "integer", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull().check(sql`scope in ('all', 'full_text', 'section')`))
    .addColumn("section_title", "text")
    .addColumn("query", "text", (c) => c.notNull())
    .addColumn("content", "jsonb", (c) => c.notNull())
    .addColumn("status", "text", (c) =>
      c
        .notNull()
        .defaultTo("open")
        .check(sql`status in ('open', 'accepted', 'rejected')`),
    )
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("decided_at", "timestamptz")
    .execute();

  await db.schema
    .createTable("saved_prompts")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("prompt_text", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("saved_prompts_owner_idx")
    .on("saved_prompts")
    .columns(["owner_id", "created_at"])
    .execute();
}

export async function down(db: Kysely<unknown>) {
  for (const table of ["saved_prompts", "letter_proposals", "letter_jobs", "letter_versions"]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
  await db.schema.dropIndex("letters_recording_unique").ifExists().execute();
  await db.schema.alterTable("letters").dropColumn("current_version").dropColumn("tags").execute();
}
