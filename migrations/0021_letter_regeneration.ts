import { sql, type Kysely } from "kysely";

// Regenerating a letter from the corrected transcript (issue 24, ADR 0032): a letter job of a third kind,
// "regenerate", whose outcome is a refinement proposal instead of a version. Append-only (STYLE.md §15).
// letter_jobs.scope / section_title: the whole letter or one section; base_version: the letter's version when the
// regeneration started (the proposal's base, so a letter changed meanwhile makes the proposal stale); query: the
// proposal's line as the door translated it for its reader; proposal_id: the proposal the run made, so the editor
// and GET /api/arztbrief-regenerate can lead to it. Create and redo jobs leave all five empty.
// Numbered 0021: 0020 is taken by another change of the same issue.
export async function up(db: Kysely<unknown>) {
  // Migration 0006 declared the check inline, so PostgreSQL named it <table>_<column>_check.
  await db.schema.alterTable("letter_jobs").dropConstraint("letter_jobs_kind_check").execute();
  await db.schema
    .alterTable("letter_jobs")
    .addCheckConstraint("letter_jobs_kind_check", sql`kind in ('create', 'redo', 'regenerate')`)
    .execute();
  await db.schema
    .alterTable("letter_jobs")
    .addColumn("scope", "text", (c) => c.check(sql`scope in ('all', 'section')`))
    .addColumn("section_title", "text")
    .addColumn("base_version", "integer")
    .addColumn("query", "text")
    .addColumn("proposal_id", "uuid", (c) => c.references("letter_proposals.id").onDelete("set null"))
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await sql`delete from letter_jobs where kind = 'regenerate'`.execute(db);
  await db.schema
    .alterTable("letter_jobs")
    .dropColumn("proposal_id")
    .dropColumn("query")
    .dropColumn("base_version")
    .dropColumn("section_title")
    .dropColumn("scope")
    .execute();
  await db.schema.alterTable("letter_jobs").dropConstraint("letter_jobs_kind_check").execute();
  await db.schema
    .alterTable("letter_jobs")
    .addCheckConstraint("letter_jobs_kind_check", sql`kind in ('create', 'redo')`)
    .execute();
}
