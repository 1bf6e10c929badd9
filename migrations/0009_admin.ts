import { type Kysely } from "kysely";

// The admin dashboard (issue 8). Append-only (STYLE.md §15).
// - users.org_claim: the configured identity-provider claim (OIDC_ORG_CLAIM) as the ID token said it at the last
//   sign-in — true, false, or null when no claim is configured or the token did not carry it. Whether an account
//   is an organisation's (SPEC §3 is_org) is decided when the dashboard reads it: this claim, or a verified
//   address in ORG_EMAIL_DOMAINS (so a changed domain list applies at once, without a sign-in).
// - usage_events and audit_events are read by time period on the dashboard: an index on the time of each.

export async function up(db: Kysely<unknown>) {
  await db.schema.alterTable("users").addColumn("org_claim", "boolean").execute();
  await db.schema.createIndex("usage_events_at_idx").on("usage_events").column("at").execute();
  await db.schema.createIndex("audit_events_at_idx").on("audit_events").column("at").execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.dropIndex("audit_events_at_idx").execute();
  await db.schema.dropIndex("usage_events_at_idx").execute();
  await db.schema.alterTable("users").dropColumn("org_claim").execute();
}
