import { audit } from "./audit.server";
import { readSession } from "./session.server";

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

function withinBudget(userId: string, now: number) {
  if (budgets.size > 10_000) budgets.clear();
  const budget = budgets.get(userId);
  if (!budget || now - budget.start >= WINDOW_MS) {
    budgets.set(userId, { start: now, count: 1 });
    return true;
  }
  budget.count += 1;
  return budget.count <= NOT_FOUND_AUDITS_PER_WINDOW;
}

/** After a 404 was decided: one denied audit row naming the caller, if signed in and within the budget. */
export async function auditNotFound(request: Request) {
  let userId = apiCallers.get(request);
  if (!userId) {
    const state = await readSession(request);
    if (state.kind !== "active") return;
    userId = state.user.id;
  }
  if (!withinBudget(userId, Date.now())) return;
  await audit({
    userId,
    action: "access.not-found",
    entityType: "path",
    entityId: new URL(request.url).pathname.slice(0, MAX_PATH),
    outcome: "denied",
    request,
  });
}

/** For the tests: forget the budgets. */
export function resetNotFoundBudgets() {
  budgets.clear();
}
