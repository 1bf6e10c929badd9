import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";

// Who did what to which record, and how it ended — never the content
// (ARCHITECTURE.md security baseline; STYLE.md §16).

export type AuditOutcome = "success" | "failure" | "denied";

export type AuditEntry = {
  userId: string | null;
  action: string;
  entityType?: string;
  entityId?: string;
  outcome: AuditOutcome;
  request?: Request;
};

export async function audit(entry: AuditEntry) {
  await getDb()
    .insertInto("audit_events")
    .values({
      user_id: entry.userId,
      action: entry.action,
      entity_type: entry.entityType ?? null,
      entity_id: entry.entityId ?? null,
      outcome: entry.outcome,
      ip: entry.request ? clientAddress(entry.request) : null,
      request_id: entry.request?.headers.get("X-Request-Id") ?? null,
    })
    .execute();
}

/**
 * The header in which server/index.mjs (server/app.mjs) hands every request the client's address: the socket's, or what
 * the proxies TRUST_PROXY names put in X-Forwarded-For. It always overwrites what the client sent under this name.
 */
export const CLIENT_ADDRESS_HEADER = "X-Skribent-Client-Address";

/** For the audit trail and the sign-in start limit; X-Forwarded-For itself is never read (ASVS 4.1.3, 15.3.4). */
export function clientAddress(request: Request) {
  return request.headers.get(CLIENT_ADDRESS_HEADER) || null;
}

/**
 * AUDIT_RETENTION_DAYS: deletes the audit rows older than the period (none without one). The deletion leaves its
 * own row — how many went is the entity id — so the trail says when and how far it was cut.
 */
export async function deleteAuditPastRetention(now = new Date()) {
  const retentionMs = getConfig().auditRetentionMs;
  if (retentionMs === null) return { auditEvents: 0 };
  const result = await getDb()
    .deleteFrom("audit_events")
    .where("at", "<", new Date(now.getTime() - retentionMs))
    .executeTakeFirst();
  const deleted = Number(result.numDeletedRows);
  if (deleted > 0)
    await audit({
      userId: null,
      action: "audit.retention",
      entityType: "audit_events",
      entityId: String(deleted),
      outcome: "success",
    });
  return { auditEvents: deleted };
}
