import { sql } from "kysely";
import { getDb } from "~/models/db.server";

// The admin dashboard's reads (issue 8): across users by design — only the admin routes call these, after the
// operator check. Time periods are half-open [from, to).

export type Period = { from: Date; to: Date };

/** Per user and endpoint: the calls (rows of unit "call") and the cost of all rows (calls, tokens, audio). */
export async function usageTotals(period: Period) {
  const rows = await getDb()
    .selectFrom("usage_events")
    .innerJoin("users", "users.id", "usage_events.user_id")
    .where("usage_events.at", ">=", period.from)
    .where("usage_events.at", "<", period.to)
    .select([
      "users.id as userId",
      "users.name",
      "users.email",
      "users.email_verified as emailVerified",
      "users.org_claim as orgClaim",
      "usage_events.endpoint",
      sql<number>`(count(*) filter (where usage_events.unit = 'call'))::int`.as("calls"),
      sql<string>`sum(usage_events.cost_usd)`.as("cost"),
    ])
    .groupBy(["users.id", "usage_events.endpoint"])
    .orderBy("users.email")
    .orderBy("users.id")
    .orderBy("usage_events.endpoint")
    .execute();
  return rows.map((row) => ({ ...row, cost: Number(row.cost) }));
}

export type AuditQuery = Period & {
  /** Part of the user's e-mail address, case-insensitive. */
  user: string | null;
  offset: number;
  limit: number;
};

/** The audit trail, newest first: who did what to which record, when, and how it ended. Never content. */
export async function auditEntries(query: AuditQuery) {
  let select = getDb()
    .selectFrom("audit_events")
    .leftJoin("users", "users.id", "audit_events.user_id")
    .where("audit_events.at", ">=", query.from)
    .where("audit_events.at", "<", query.to);
  if (query.user) {
    const pattern = `%${query.user.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    select = select.where(sql<boolean>`users.email ilike ${pattern}`);
  }
  return select
    .select([
      "audit_events.id",
      "audit_events.at",
      "users.email",
      "audit_events.action",
      "audit_events.entity_type as entityType",
      "audit_events.entity_id as entityId",
      "audit_events.outcome",
    ])
    .orderBy("audit_events.at", "desc")
    .orderBy("audit_events.id", "desc")
    .offset(query.offset)
    .limit(query.limit)
    .execute();
}
