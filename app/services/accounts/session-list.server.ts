import {
  deleteOtherSessions,
  deleteSessionsBeyond,
  deleteSessionsExcept,
  listActiveSessions,
} from "~/models/session.server";
import { auditAccount, auditSession, type SessionAction } from "../audit/events.server";
import { getConfig } from "../config/config.server";

// Settings › "Aktive Sitzungen" (ASVS 5.0 7.5.2, 7.1.2): a user sees where they are signed in and ends the other
// sessions. Sessions are rows looked up on every request (ADR 0003), so a deleted row is a signed-out browser at
// its next request. The page knows sessions only by their public id; the cookie's hash never leaves the server.
// Admins end a user's sessions, or everyone's, at ADMIN_PATH/sessions (ASVS 5.0 7.4.5).

/**
 * At most this many live sessions per account (README "Sessions", docs/security.md 7.1.2). A sign-in is never
 * refused for it — a clinician at the bedside must get in — the least recently used session ends instead. Ten is
 * more than the workstations, ward PCs, phone and home computer one clinician uses within a 30-minute idle window;
 * the cap bounds what a scripted sign-in loop can pile up and keeps the list short enough to check.
 */
export const MAX_SESSIONS_PER_USER = 10;

export type SessionListItem = {
  id: string;
  device: string | null;
  startedAt: string;
  lastSeenAt: string;
  current: boolean;
};

function liveness(userId: string, now: Date) {
  return { userId, now, idleMs: getConfig().session.idleMs };
}

/** The user's active sessions, the current one marked; nothing else of the rows. */
export async function listSessions(args: { userId: string; currentIdHash: string }): Promise<SessionListItem[]> {
  const rows = await listActiveSessions({ ...liveness(args.userId, new Date()), currentIdHash: args.currentIdHash });
  return rows.map((row) => ({
    id: row.public_id,
    device: row.device_label,
    startedAt: row.created_at.toISOString(),
    lastSeenAt: row.last_seen_at.toISOString(),
    current: Boolean(row.is_current),
  }));
}

async function auditEnded(userId: string, ids: string[], action: SessionAction, request?: Request) {
  for (const id of ids) await auditSession(request, userId, action, id);
}

/**
 * Ends one other session of the user. False when the id is none of theirs — another user's, made up, or the
 * current session (that one ends with the logout, which also ends the provider's session).
 */
export async function endOtherSession(args: {
  userId: string;
  currentIdHash: string;
  publicId: string;
  request: Request;
}) {
  const ended = await deleteOtherSessions(args);
  await auditEnded(args.userId, ended, "session.end", args.request);
  return ended.length > 0;
}

/** Ends every session of the user but the current one; returns how many ended. */
export async function endAllOtherSessions(args: { userId: string; currentIdHash: string; request: Request }) {
  const ended = await deleteOtherSessions({ userId: args.userId, currentIdHash: args.currentIdHash });
  await auditEnded(args.userId, ended, "session.end", args.request);
  return ended.length;
}

/** After a sign-in: the least recently used sessions beyond the cap end (never the new one). */
export async function keepSessionsWithinCap(args: { userId: string; newIdHash: string; now: Date }) {
  const ended = await deleteSessionsBeyond({
    ...liveness(args.userId, args.now),
    keep: MAX_SESSIONS_PER_USER,
    newIdHash: args.newIdHash,
  });
  await auditEnded(args.userId, ended, "session.evicted");
}

/**
 * An admin ends sessions of other people: each ended session is audited under its owner as `session.admin-end`,
 * and each account it touched under the admin as `admin.sessions-end` (the account's id as the entity, as
 * `admin.account-delete` does); the rows share the request's id. Returns how many sessions ended.
 */
async function endAsAdmin(args: {
  adminId: string;
  currentIdHash: string;
  userIds?: string[];
  request: Request;
}): Promise<number> {
  const ended = await deleteSessionsExcept({ keepIdHash: args.currentIdHash, userIds: args.userIds });
  for (const row of ended) await auditEnded(row.user_id, [row.public_id], "session.admin-end", args.request);
  const accounts = new Set([...(args.userIds ?? []), ...ended.map((row) => row.user_id)]);
  for (const userId of accounts) await auditAccount(args.request, args.adminId, "admin.sessions-end", userId);
  return ended.length;
}

/** Every session of these accounts (one address may name several); the admin's own current one stays. */
export async function endSessionsOfAccounts(args: {
  adminId: string;
  currentIdHash: string;
  userIds: string[];
  request: Request;
}) {
  return endAsAdmin(args);
}

/** Every session of every account but the admin's current one. */
export async function endEveryonesSessions(args: { adminId: string; currentIdHash: string; request: Request }) {
  return endAsAdmin(args);
}
