import { audit } from "./audit.server";
import { readSession } from "../web/session.server";

// ASVS 5.0 16.3.2: failed authorization attempts are logged. Skribent answers another user's id or key with 404,
// never 403 (issue 9, the access-control matrix), so a 404 answered to a signed-in caller is what such an attempt
// looks like from outside: it is audited as denied, `access.not-found`, with the path asked for as the entity (ids
// and keys only — no path of Skribent holds patient text). A mistyped address is indistinguishable and audited too.
// A caller who walks through ids would write a row per guess: after NOT_FOUND_AUDITS_PER_WINDOW rows in a window
// the rest of that window's 404s are not audited (the first rows already say who and from where).

export const NOT_FOUND_AUDITS_PER_WINDOW = 20;
const WINDOW_MS = 10 * 60_000;
const MAX_PATH = 200;

const budgets = new Map<string, { start: number; count: number }>();
/** The JSON API's callers by request: a bearer token is verified once, in requireApiUser, not again here. */
const apiCallers = new WeakMap<Request, string>();

export function rememberApiCaller(request: Request, userId: string) {
  apiCallers.set(request, userId);
}

/** `who`: a user id, or one shared name for refusals that name nobody. */
function withinBudget(who: string, now: number) {
  if (budgets.size > 10_000) budgets.clear();
  const budget = budgets.get(who);
  if (!budget || now - budget.start >= WINDOW_MS) {
    budgets.set(who, { start: now, count: 1 });
    return true;
  }
  budget.count += 1;
  return budget.count <= NOT_FOUND_AUDITS_PER_WINDOW;
}

/** Runs a route's answer and audits it if it is a 404, returned or thrown (resource routes, the JSON API). */
export async function withNotFoundAudit(request: Request, answer: () => Promise<Response>): Promise<Response> {
  const audited = (status: number) =>
    status === 404 ? auditNotFound(request).catch(() => undefined) : Promise.resolve();
  try {
    const response = await answer();
    await audited(response.status);
    return response;
  } catch (thrown) {
    if (thrown instanceof Response) await audited(thrown.status);
    throw thrown;
  }
}

/**
 * A storage URL whose signature does not match (forged or altered, not merely expired: expired links are routine):
 * audited as `storage.signature`, denied, with the key. Nobody is named — the URL is the credential — so all such
 * refusals share one budget.
 */
export async function auditForgedSignature(request: Request, key: string) {
  if (!withinBudget("storage.signature", Date.now())) return;
  await audit({
    userId: null,
    action: "storage.signature",
    entityType: "storage_key",
    entityId: key.slice(0, MAX_PATH),
    outcome: "denied",
    request,
  });
}

/**
 * After a 404 was decided: one denied audit row naming the caller, if signed in and within the budget. The entity is
 * the path, unless the caller names it (the live socket's session id travels in its query string).
 */
export async function auditNotFound(
  request: Request,
  known?: { userId: string; entityType: string; entityId: string },
) {
  let userId = known?.userId ?? apiCallers.get(request);
  if (!userId) {
    const state = await readSession(request);
    if (state.kind !== "active") return;
    userId = state.user.id;
  }
  if (!withinBudget(userId, Date.now())) return;
  await audit({
    userId,
    action: "access.not-found",
    entityType: known?.entityType ?? "path",
    entityId: (known?.entityId ?? new URL(request.url).pathname).slice(0, MAX_PATH),
    outcome: "denied",
    request,
  });
}

/** For the tests: forget the budgets. */
export function resetNotFoundBudgets() {
  budgets.clear();
}
