import { createHash, randomBytes } from "node:crypto";
import { redirect } from "@remix-run/node";
import { deleteSession, findSession, insertSession, touchSession } from "~/models/session.server";
import { auditAccess } from "../audit/events.server";
import { getConfig } from "../config/config.server";
import { siteCookie } from "./cookies.server";
import { deviceLabel } from "../accounts/device-label.server";
import { keepPendingPost } from "./pending-post.server";
import { isCrossSiteWrite, SESSION_COOKIE } from "./security.server";
import { keepSessionsWithinCap } from "../accounts/session-list.server";
import { rethrowAsUnavailable } from "./unavailable.server";
import { keepSession, keptSession, sessionReadTicket } from "./session-cache.server";

// Sessions are database rows; the cookie holds only a random id (STYLE.md §11,
// ADR 0003). The table stores a hash of the id. Idle and absolute limits come
// from configuration (30 min / 12 h).

const TOUCH_INTERVAL_MS = 60_000;

function sessionCookie() {
  const config = getConfig();
  return siteCookie(SESSION_COOKIE, {
    httpOnly: true,
    sameSite: "lax",
    secrets: config.cookieSecrets,
    maxAge: Math.floor(config.session.absoluteMs / 1000),
  });
}

export function hashSessionId(id: string) {
  return createHash("sha256").update(id).digest("base64url");
}

export type SessionUser = { id: string; email: string | null; emailVerified: boolean; name: string | null };

export type SessionState =
  { kind: "active"; user: SessionUser; idHash: string } | { kind: "expired"; userId: string } | { kind: "none" };

/**
 * Creates a fresh session (a new id at every sign-in) and returns its Set-Cookie. Only a coarse device label of the
 * User-Agent is kept; sessions beyond the per-account cap end (accounts/session-list.server.ts).
 */
export async function startSession(args: {
  userId: string;
  idToken: string | null;
  userAgent?: string | null;
  now?: Date;
}) {
  const config = getConfig();
  const id = randomBytes(32).toString("base64url");
  const now = args.now ?? new Date();
  const idHash = hashSessionId(id);
  await insertSession({
    idHash,
    userId: args.userId,
    expiresAt: new Date(now.getTime() + config.session.absoluteMs),
    idToken: args.idToken,
    deviceLabel: deviceLabel(args.userAgent),
  });
  await keepSessionsWithinCap({ userId: args.userId, newIdHash: idHash, now });
  return sessionCookie().serialize(id);
}

// The layout and the page loaders of one request each authorize first; the session is looked up once, not once per
// loader. Remix hands every loader its own copy of the request, so a page read (GET/HEAD, where no action runs
// between the lookups) shares the lookup in flight for the same cookies: the loaders start together, before the
// first lookup has its answer. It is forgotten as soon as it has one, so a later request looks again.
const inFlight = new Map<string, Promise<SessionState>>();

export function readSession(request: Request, now?: Date): Promise<SessionState> {
  if (now) return lookUpSession(request, now);
  const read = request.method === "GET" || request.method === "HEAD";
  const key = read ? request.headers.get("Cookie") : null;
  const shared = key === null ? undefined : inFlight.get(key);
  if (shared) return shared;
  // Every signed-in request reads its session first: with the database down that is where it stops, as a 503
  // (the error page's "temporarily unavailable"), not as an unexpected error or a sign-in page.
  const state = lookUpSession(request, new Date()).catch(rethrowAsUnavailable);
  if (key !== null) {
    inFlight.set(key, state);
    const forget = () => inFlight.delete(key);
    state.then(forget, forget);
  }
  return state;
}

async function lookUpSession(request: Request, now: Date): Promise<SessionState> {
  const id = await sessionCookie().parse(request.headers.get("Cookie"));
  if (typeof id !== "string" || id.length < 20) return { kind: "none" };
  const idHash = hashSessionId(id);
  // A kept row is the database's row (session-cache.server.ts): the same ends are worked out from it.
  let row = keptSession(idHash, now.getTime());
  const ticket = row ? undefined : sessionReadTicket();
  row ??= await findSession({ idHash });
  if (!row) return { kind: "none" };
  const { idleMs } = getConfig().session;
  if (row.expires_at <= now || now.getTime() - row.last_seen_at.getTime() >= idleMs) {
    await deleteSession({ idHash });
    return { kind: "expired", userId: row.user_id };
  }
  if (now.getTime() - row.last_seen_at.getTime() >= TOUCH_INTERVAL_MS) {
    // The update's notice drops the kept row; the next request reads the touched one.
    await touchSession({ idHash, at: now });
  } else if (ticket !== undefined) {
    keepSession(idHash, row, ticket, now.getTime());
  }
  return {
    kind: "active",
    idHash,
    user: { id: row.user_id, email: row.email, emailVerified: row.email_verified, name: row.name },
  };
}

/** Ends the session: deletes the row; returns the id token for the provider's logout. */
export async function endSession(request: Request) {
  const id = await sessionCookie().parse(request.headers.get("Cookie"));
  const removed = typeof id === "string" ? await deleteSession({ idHash: hashSessionId(id) }) : undefined;
  return {
    userId: removed?.user_id ?? null,
    idToken: removed?.id_token ?? null,
    setCookie: await sessionCookie().serialize("", { maxAge: 0 }),
  };
}

/** The signed-in user, if any, without redirecting (for the root loader). */
export async function getOptionalUser(request: Request) {
  const state = await readSession(request);
  return state.kind === "active" ? state.user : null;
}

/**
 * Authorize first (STYLE.md §4): the signed-in user of a page request, or a
 * redirect to sign-in that comes back here. A state-changing request from
 * another site is refused before anything else. A form posted after the
 * session expired is kept (see web/pending-post.server.ts) and offered again after
 * the user signed in.
 */
export async function requireUser(request: Request): Promise<SessionUser> {
  const config = getConfig();
  if (isCrossSiteWrite(request, config.appUrl)) {
    await auditAccess(request, null, "csrf.rejected", "denied");
    throw new Response("Cross-site request refused", { status: 403 });
  }
  const state = await readSession(request);
  if (state.kind === "active") return state.user;
  const url = new URL(request.url);
  let returnTo = `${url.pathname}${url.search}`;
  if (request.method !== "GET" && request.method !== "HEAD") {
    if (state.kind === "expired") {
      const pendingId = await keepPendingPost({ userId: state.userId, request });
      if (pendingId) returnTo = `/resume/${pendingId}`;
    } else {
      returnTo = "/";
    }
  }
  const reason = state.kind === "expired" ? "&expired=1" : "";
  throw redirect(`/login?redirectTo=${encodeURIComponent(returnTo)}${reason}`);
}

/**
 * requireUser, and which of the user's sessions this request is — by the hash of its cookie, which never leaves
 * the server (Settings › "Aktive Sitzungen" tells the current session from the others with it).
 */
export async function requireUserSession(request: Request) {
  const user = await requireUser(request);
  const id = (await sessionCookie().parse(request.headers.get("Cookie"))) as string;
  return { user, currentIdHash: hashSessionId(id) };
}
