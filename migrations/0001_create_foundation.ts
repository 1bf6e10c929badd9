import { sql, type Kysely } from "kysely";

// Append-only (STYLE.md §15): never edit this file once it has landed.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("users")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("issuer", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("email", "text")
    .addColumn("email_verified", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("name", "text")
    .addColumn("locale", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("last_login_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("users_issuer_subject_key", ["issuer", "subject"])
    .execute();

  await db.schema
    .createTable("sessions")
    .addColumn("id_hash", "text", (c) => c.primaryKey())
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("last_seen_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("id_token", "text")
    .execute();
  await db.schema.createIndex("sessions_user_id_idx").on("sessions").column("user_id").execute();
  await db.schema.createIndex("sessions_expires_at_idx").on("sessions").column("expires_at").execute();

  await db.schema
    .createTable("audit_events")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("user_id", "uuid")
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("entity_type", "text")
    .addColumn("entity_id", "text")
    .addColumn("outcome", "text", (c) => c.notNull().check(sql`outcome in ('success', 'failure', 'denied')`))
    .addColumn("ip", "text")
    .addColumn("request_id", "text")
    .execute();
  await db.schema.createIndex("audit_events_user_at_idx").on("audit_events").columns(["user_id", "at"]).execute();

  await db.schema
    .createTable("rate_limits")
    .addColumn("bucket", "text", (c) => c.notNull())
    .addColumn("window_start", "timestamptz", (c) => c.notNull())
    .addColumn("hits", "integer", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("rate_limits_pkey", ["bucket", "window_start"])
    .execute();

  await db.schema
    .createTable("usage_events")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("endpoint", "text", (c) => c.notNull())
    .addColumn("units", "numeric(14, 4)", (c) => c.notNull())
    .addColumn("unit", "text", (c) => c.notNull())
    .addColumn("cost_usd", "numeric(14, 6)", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex("usage_events_user_endpoint_idx")
    .on("usage_events")
    .columns(["user_id", "endpoint"])
    .execute();

  await db.schema
    .createTable("pending_posts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("path", "text", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("recordings")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("storage_key", "text", (c) => c.notNull().unique())
    .addColumn("original_filename", "text", (c) => c.notNull())
    .addColumn("display_name", "text")
    .addColumn("tags", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("language_code", "text", (c) => c.notNull())
    .addColumn("template_id", "text")
    .addColumn("transcription_mode", "text", (c) =>
      c
        .notNull()
        .defaultTo("transcript_and_letter")
        .check(sql`transcription_mode in ('transcript', 'transcript_and_letter')`),
    )
    .addColumn("transcription_status", "text", (c) =>
      c
        .notNull()
        .defaultTo("pending")
        .check(sql`transcription_status in ('pending', 'processing', 'completed', 'failed')`),
    )
    .addColumn("transcript_key", "text")
    .addColumn("medical_letter_status", "text", (c) =>
      c
        .notNull()
        .defaultTo("pending")
        .check(sql`medical_letter_status in ('pending', 'processing', 'completed', 'failed', 'structure_error')`),
    )
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("recordings_owner_created_idx")
    .on("recordings")
    .columns(["owner_id", "created_at"])
    .execute();

  await db.schema
    .createTable("letters")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("recording_id", "uuid", (c) => c.references("recordings.id").onDelete("set null"))
    .addColumn("storage_key", "text", (c) => c.notNull().unique())
    .addColumn("template_id", "text")
    .addColumn("language_code", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("letters_owner_created_idx").on("letters").columns(["owner_id", "created_at"]).execute();
}

export async function down(db: Kysely<unknown>) {
  for (const table of [
    "letters",
    "recordings",
    "pending_posts",
    "usage_events",
    "rate_limits",
    "audit_events",
    "sessions",
    "users",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
