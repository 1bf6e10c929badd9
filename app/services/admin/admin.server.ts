import { json } from "@remix-run/node";
import { ApiError, apiErrorResponse, requireApiUser } from "../web/api.server";
import { auditAccess, type AdminAction } from "../audit/events.server";
import { isOperator } from "../web/auth.server";
import { getConfig } from "../config/config.server";
import { notFound } from "../web/not-found.server";
import { requireUserSession, type SessionUser } from "../web/session.server";

// The admin dashboard's doors (SPEC §2 "Admin dashboard", §6; ADR 0014). Every loader and call decides on the
// server, from the verified identity, whether its caller is one of the operator's admins. Nobody else learns
// anything but SPEC §8's 'Access denied - unauthorized domain' (403).

export const ACCESS_DENIED = "Access denied - unauthorized domain";

/** `currentIdHash`: which of the caller's sessions this request is (ADMIN_PATH/sessions keeps it). */
export type AdminGate = { admin: boolean; user: SessionUser; currentIdHash: string };

/**
 * A dashboard page: 404 unless the address is the configured hidden path (ADMIN_PATH), sign-in as anywhere
 * else, then the operator check. A refusal is audited under `action` (the layout passes none: its page does).
 */
export async function adminGate(
  request: Request,
  params: { adminPath?: string },
  action?: AdminAction,
): Promise<AdminGate> {
  if (`/${params.adminPath ?? ""}` !== getConfig().admin.path) {
    // `/api/audit` and `/api/usage.csv` land here rather than on api.$.tsx: unknown API paths answer JSON.
    if (params.adminPath?.toLowerCase() === "api") throw apiErrorResponse(404, "Not found");
    notFound();
  }
  const { user, currentIdHash } = await requireUserSession(request);
  const admin = isOperator(user);
  if (action) await auditAccess(request, user.id, action, admin ? "success" : "denied");
  return { admin, user, currentIdHash };
}

/** A dashboard form page's loader: whether the page is refused (403; the gate audits `screen`). */
export async function adminFormLoader(request: Request, params: { adminPath?: string }, screen: AdminAction) {
  const gate = await adminGate(request, params, screen);
  return json({ denied: !gate.admin }, { status: gate.admin ? 200 : 403 });
}

/** A dashboard form's post: the admin's gate, or null once a refusal is audited under `action` (answer 403). */
export async function adminFormGate(request: Request, params: { adminPath?: string }, action: AdminAction) {
  const gate = await adminGate(request, params);
  if (gate.admin) return gate;
  await auditAccess(request, gate.user.id, action, "denied");
  return null;
}

/** A JSON call for admins only: 401 without credentials, 403 with SPEC §8's message for everyone else. */
export async function requireApiAdmin(request: Request, action: AdminAction) {
  const user = await requireApiUser(request);
  if (!isOperator(user)) {
    await auditAccess(request, user.id, action, "denied");
    throw new ApiError(403, ACCESS_DENIED);
  }
  await auditAccess(request, user.id, action, "success");
  return user;
}
