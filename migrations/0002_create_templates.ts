import { sql, type Kysely } from "kysely";

// Templates and settings (issue 3). System templates are versioned data files
// (app/data/templates/system); the database holds only what each user changed.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .alterTable("users")
    .addColumn("rag_agreed", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("rag_agreed_at", "timestamptz")
    .execute();

  // Deviations from the default collection: a system template added or removed.
  await db.schema
    .createTable("user_template_collection")
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("template_id", "text", (c) => c.notNull())
    .addColumn("language_code", "text", (c) => c.notNull().check(sql`language_code in ('de-DE', 'en-GB')`))
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('added', 'removed')`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("user_template_collection_pkey", ["user_id", "template_id", "language_code"])
    .execute();

  // A user's own structure of a system template (edits apply to that user only).
  await db.schema
    .createTable("user_structures")
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("template_id", "text", (c) => c.notNull())
    .addColumn("language_code", "text", (c) => c.notNull().check(sql`language_code in ('de-DE', 'en-GB')`))
    .addColumn("elements", "jsonb", (c) => c.notNull())
    .addColumn("prompt", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("user_structures_pkey", ["user_id", "template_id", "language_code"])
    .execute();

  await db.schema
    .createTable("custom_templates")
    .addColumn("owner_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("template_id", "text", (c) => c.notNull())
    .addColumn("language_code", "text", (c) => c.notNull().check(sql`language_code in ('de-DE', 'en-GB')`))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("elements", "jsonb", (c) => c.notNull())
    .addColumn("prompt", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("custom_templates_pkey", ["owner_id", "template_id", "language_code"])
    .execute();
  await sql`create unique index custom_templates_owner_name_key on custom_templates (owner_id, language_code, lower(name))`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("custom_templates").ifExists().execute();
  await db.schema.dropTable("user_structures").ifExists().execute();
  await db.schema.dropTable("user_template_collection").ifExists().execute();
  await db.schema.alterTable("users").dropColumn("rag_agreed_at").dropColumn("rag_agreed").execute();
}
