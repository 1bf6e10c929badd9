import { type Kysely } from "kysely";

// The patient's consent to the recording (issue 22; GDPR Art. 9, §203 StGB). Append-only (STYLE.md §15).
// recordings.consent_*: how the consent was given (oral, written), by whom (the patient, or a legal representative),
// which user confirmed it and when. All null: "Einwilligung nicht dokumentiert" (every row from before).
// live_sessions.consent_*: the same, confirmed before the first buffer of a live recording; its save copies them.
// consent_confirmed_by is a user id without a foreign key: it is always the owner, deleted with the recording.
export async function up(db: Kysely<unknown>) {
  await db.schema
    .alterTable("recordings")
    .addColumn("consent_kind", "text")
    .addColumn("consent_given_by", "text")
    .addColumn("consent_confirmed_by", "text")
    .addColumn("consent_confirmed_at", "timestamptz")
    .execute();
  await db.schema
    .alterTable("live_sessions")
    .addColumn("consent_kind", "text")
    .addColumn("consent_given_by", "text")
    .addColumn("consent_confirmed_at", "timestamptz")
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema
    .alterTable("live_sessions")
    .dropColumn("consent_confirmed_at")
    .dropColumn("consent_given_by")
    .dropColumn("consent_kind")
    .execute();
  await db.schema
    .alterTable("recordings")
    .dropColumn("consent_confirmed_at")
    .dropColumn("consent_confirmed_by")
    .dropColumn("consent_given_by")
    .dropColumn("consent_kind")
    .execute();
}
