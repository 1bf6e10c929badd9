import { sql, type Kysely } from "kysely";

// Letterheads for the letters that leave Skribent (issue 25). Append-only (STYLE.md §15). One row per user (scope
// 'user', owner_id set) and at most one for the whole practice (scope 'practice', set by an admin, owner_id null):
// a unique constraint on owner_id and a unique partial index on the practice scope. The limits below are the
// service's (app/services/accounts/letterhead-rules.ts) restated, so a row written past the service still cannot
// break a letter's layout. The logo is stored here, not in object storage: at most 256 KiB, PNG or SVG, checked
// (and an SVG refused unless harmless) before it is written. Numbered 0023; 0020 was never used.
export async function up(db: Kysely<unknown>) {
  await db.schema
    .createTable("letterheads")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("scope", "text", (c) => c.notNull().check(sql`scope in ('user', 'practice')`))
    .addColumn("owner_id", "uuid", (c) => c.references("users.id").onDelete("cascade"))
    .addColumn("practice_name", "text", (c) =>
      c
        .notNull()
        .defaultTo("")
        .check(sql`char_length(practice_name) <= 120`),
    )
    .addColumn("doctors", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("street", "text", (c) =>
      c
        .notNull()
        .defaultTo("")
        .check(sql`char_length(street) <= 120`),
    )
    .addColumn("postal_code", "text", (c) =>
      c
        .notNull()
        .defaultTo("")
        .check(sql`char_length(postal_code) <= 10`),
    )
    .addColumn("city", "text", (c) =>
      c
        .notNull()
        .defaultTo("")
        .check(sql`char_length(city) <= 80`),
    )
    .addColumn("phone", "text", (c) =>
      c
        .notNull()
        .defaultTo("")
        .check(sql`char_length(phone) <= 40`),
    )
    .addColumn("email", "text", (c) =>
      c
        .notNull()
        .defaultTo("")
        .check(sql`char_length(email) <= 254`),
    )
    .addColumn("bsnr", "text", (c) => c.check(sql`bsnr ~ '^[0-9]{9}$'`))
    .addColumn("lanr", "text", (c) => c.check(sql`lanr ~ '^[0-9]{9}$'`))
    .addColumn("closing", "text", (c) =>
      c
        .notNull()
        .defaultTo("")
        .check(sql`char_length(closing) <= 80`),
    )
    .addColumn("signature", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("logo", "bytea", (c) => c.check(sql`octet_length(logo) <= 262144`))
    .addColumn("logo_mime", "text", (c) => c.check(sql`logo_mime in ('image/png', 'image/svg+xml')`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("letterheads_owner_unique", ["owner_id"])
    .addCheckConstraint("letterheads_scope_owner", sql`(scope = 'user') = (owner_id is not null)`)
    .addCheckConstraint("letterheads_logo_mime", sql`(logo is null) = (logo_mime is null)`)
    .addCheckConstraint(
      "letterheads_lines",
      sql`jsonb_typeof(doctors) = 'array' and jsonb_array_length(doctors) <= 6
        and jsonb_typeof(signature) = 'array' and jsonb_array_length(signature) <= 4`,
    )
    .execute();
  // At most one practice letterhead: owner_id is null there, and nulls are distinct in the constraint above.
  await db.schema
    .createIndex("letterheads_one_practice")
    .on("letterheads")
    .column("scope")
    .unique()
    .where("scope", "=", "practice")
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropTable("letterheads").ifExists().execute();
}
