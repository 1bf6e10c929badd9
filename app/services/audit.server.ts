import { getDb } from "./db.server";

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

export function clientAddress(request: Request) {
  // Only meaningful behind a trusted proxy; kept for forensics, never for decisions.
  const forwarded = request.headers.get("X-Forwarded-For");
  return forwarded ? forwarded.split(",")[0].trim() : null;
}
