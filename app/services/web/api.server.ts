import type { TypedResponse } from "@remix-run/node";
import { isLanguage, type Language } from "~/i18n";
import { getUserByIdentity, upsertUserByIdentity } from "~/models/user.server";
import { InsufficientScopeError } from "./api-scope.server";
import { auditAccess } from "../audit/events.server";
import { AuthenticationStrengthError, verifyAccessToken } from "./auth.server";
import { getConfig } from "../config/config.server";
import { DomainError, statusFor } from "./domain-error.server";
import { getFixedTFor } from "./i18n.server";
import { wholeAnswer } from "./known-body.server";
import { applySecurityHeaders } from "./security.server";
import { requireUser, type SessionUser } from "./session.server";
import { rememberApiCaller, withNotFoundAudit } from "../audit/not-found-audit.server";
import { isServiceUnavailable, RETRY_AFTER_SECONDS } from "./unavailable.server";
import { endpointOfPath, meterCall } from "../admin/usage.server";

// The JSON door of SPEC §7 (ARCHITECTURE.md "The JSON API contract"): a bearer
// access token from the configured provider or the session cookie; never a
// redirect; every non-OK answer is {"detail": "..."}.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers?: HeadersInit,
  ) {
    super(detail);
  }
}

/**
 * A JSON answer with its length: the compression in front (server/app.mjs) leaves bodies under 1 KB as they are only
 * when it knows their length — without it every answer, even `{"prompts":[]}`, went through a gzip stream of its own
 * (about a fifth of the cheapest signed-in answer's CPU, docs/performance.md).
 */
export function apiJson<T>(data: T, init: ResponseInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("Cache-Control", "no-store");
  applySecurityHeaders(headers, { appUrl: getConfig().appUrl });
  headers.set("Content-Type", "application/json; charset=utf-8");
  return wholeAnswer(JSON.stringify(data), { ...init, headers }) as TypedResponse<T>;
}

export function apiErrorResponse(status: number, detail: string, headers?: HeadersInit) {
  return apiJson({ detail }, { status, headers });
}

/** The database or object storage is down: the call changed nothing and can be repeated. */
export class ServiceUnavailableError extends ApiError {
  constructor() {
    super(statusFor("service_down"), "Service temporarily unavailable. Please try again.");
  }
}

/** The caller of a JSON call; once known, the call is metered (one usage row, not waited for). */
export async function requireApiUser(request: Request): Promise<SessionUser & { via: "bearer" | "session" }> {
  const user = await identifyApiUser(request);
  rememberApiCaller(request, user.id);
  meterCall(user.id, endpointOfPath(new URL(request.url).pathname));
  return user;
}

async function identifyApiUser(request: Request): Promise<SessionUser & { via: "bearer" | "session" }> {
  const authorization = request.headers.get("Authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) throw new ApiError(401, "Unauthorized");
    let identity: Awaited<ReturnType<typeof verifyAccessToken>>;
    try {
      identity = await verifyAccessToken(match[1]);
    } catch (failure) {
      if (failure instanceof AuthenticationStrengthError) throw await refuseWeakToken(request, failure);
      if (failure instanceof InsufficientScopeError) throw await refuseUnscopedToken(request, failure);
      await auditAccess(request, null, "api.bearer", "denied");
      throw new ApiError(401, "Unauthorized");
    }
    // A user who never signed in to the web app still gets an account keyed by issuer + subject.
    const existing = await getUserByIdentity(identity);
    const user =
      existing ??
      (await upsertUserByIdentity({
        ...identity,
        emailVerified: identity.emailVerified === true,
        name: null,
        locale: null,
      }));
    const email = identity.email ?? user.email;
    // A token silent about verification counts as verified only when a web sign-in's ID token verified this very
    // address (the admin check needs a verified e-mail, and providers let people register unverified ones).
    const storedVerified = existing?.email_verified === true && existing.email === email;
    return {
      id: user.id,
      email,
      emailVerified: identity.emailVerified ?? storedVerified,
      name: user.name,
      via: "bearer",
    };
  }
  try {
    const user = await requireUser(request);
    return { ...user, via: "session" };
  } catch (thrown) {
    if (thrown instanceof Response && thrown.status === 403) throw new ApiError(403, "Forbidden");
    // The database is down: the session may be perfectly valid, so never a 401 that sends the client to sign in.
    if (thrown instanceof Response && thrown.status === statusFor("service_down")) throw new ServiceUnavailableError();
    throw new ApiError(401, "Unauthorized");
  }
}

/**
 * OIDC_ACR_VALUES (ADR 0019): a genuine access token whose sign-in was not strong enough. The answer is RFC 9470's
 * step-up challenge, so a client knows to sign in again at one of these levels rather than retry; the body stays the
 * SPEC's "Unauthorized". An account that already exists is named in the audit row; none is created. Like every other
 * refused token, it is audited, not logged: a client retrying in a loop would otherwise fill the log.
 */
async function refuseWeakToken(request: Request, failure: AuthenticationStrengthError) {
  const known = await getUserByIdentity(failure.identity);
  await auditAccess(request, known?.id ?? null, "api.bearer.acr", "denied");
  const acrValues = getConfig().oidc.acrValues?.join(" ") ?? "";
  return new ApiError(401, "Unauthorized", {
    "WWW-Authenticate": `Bearer error="insufficient_user_authentication", acr_values="${acrValues}"`,
  });
}

/**
 * OIDC_API_SCOPE (ADR 0021): a genuine access token for this API, but its client was not granted the API's scope.
 * RFC 6750 §3.1's answer: 403 with the scope to ask for, so a client requests it rather than sign the user in again;
 * the body is the API's usual "Forbidden". Audited like refuseWeakToken: the known account named, none created.
 */
async function refuseUnscopedToken(request: Request, failure: InsufficientScopeError) {
  const known = await getUserByIdentity(failure.identity);
  await auditAccess(request, known?.id ?? null, "api.bearer.scope", "denied");
  return new ApiError(403, "Forbidden", {
    "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${failure.scope}"`,
  });
}

/**
 * The largest JSON body a call reads (README "Limits"): 10 MB, above the longest live transcript a save or a
 * refinement sends (4 hours of dense speech is about 7 MB). Beyond it a 413 naming the limit (issue 22), decided by
 * Content-Length before anything is read, or by counting a chunked body's bytes, which stops at the limit: a body
 * is never held in memory whole to find out it was too large.
 */
export const MAX_JSON_BODY_BYTES = 10 * 1024 * 1024;
const MAX_JSON_BODY_LABEL = "10 MB";

async function jsonBodyTooLarge(request: Request) {
  const t = await getFixedTFor(detailLanguage(request), ["common"]);
  return new ApiError(413, t("errors.jsonBodyTooLarge", { limit: MAX_JSON_BODY_LABEL }));
}

async function readJsonText(request: Request) {
  const declared = Number(request.headers.get("Content-Length"));
  if (declared > MAX_JSON_BODY_BYTES) {
    await request.body?.cancel().catch(() => undefined);
    throw await jsonBodyTooLarge(request);
  }
  const reader = request.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JSON_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw await jsonBodyTooLarge(request);
    }
    chunks.push(value);
  }
  // As request.json() decodes: UTF-8, a leading byte order mark dropped.
  return new TextDecoder().decode(Buffer.concat(chunks));
}

export async function readJsonBody(request: Request): Promise<Record<string, unknown>> {
  const type = request.headers.get("Content-Type") ?? "";
  if (!type.includes("application/json")) throw new ApiError(415, "Expected a JSON body");
  const text = await readJsonText(request).catch((failure: unknown) => {
    if (failure instanceof ApiError) throw failure;
    throw new ApiError(400, "Invalid JSON body");
  });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "Invalid JSON body");
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new ApiError(400, "Invalid JSON body");
  return body as Record<string, unknown>;
}

export type ApiUser = Awaited<ReturnType<typeof requireApiUser>>;

/**
 * A SPEC §7 POST: authorize first, then the method, then the JSON body (skipped
 * with `{ body: false }` for calls whose parameters are in the query).
 */
export function apiPost(
  handler: (args: { request: Request; user: ApiUser; body: Record<string, unknown> }) => Promise<Response>,
  options: { body?: boolean } = {},
) {
  return apiRoute(async ({ request }: { request: Request }) => {
    const user = await requireApiUser(request);
    if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
    const body = options.body === false ? {} : await readJsonBody(request);
    return handler({ request, user, body });
  });
}

function unavailable(error: unknown) {
  console.warn("[api] a service is unavailable:", error instanceof Error ? error.message : error);
  return new ServiceUnavailableError();
}

/** Wraps an API loader/action: maps ApiError, services that are down and unexpected failures to JSON. */
export function apiRoute<A extends { request: Request }>(handler: (args: A) => Promise<Response>) {
  // Another user's id is a 404 (never 403): audited as a denied attempt (ASVS 16.3.2).
  return async (args: A) => withNotFoundAudit(args.request, () => answer(handler, args));
}

/**
 * The language of a refusal's `detail`: the SPEC's English for every API client, and the page's language for the
 * app's own scripts, which name it in X-Skribent-Language (app/pe/upload/api.js), so a German clinician reads why
 * a file was refused in German. Only the words change; status and shape stay.
 */
export const DETAIL_LANGUAGE_HEADER = "X-Skribent-Language";

export function detailLanguage(request: Request): Language {
  const asked = request.headers.get(DETAIL_LANGUAGE_HEADER)?.trim().toLowerCase();
  return isLanguage(asked) ? asked : "en";
}

async function answer<A extends { request: Request }>(handler: (args: A) => Promise<Response>, args: A) {
  try {
    return await handler(args);
  } catch (thrown) {
    const error = isServiceUnavailable(thrown) ? unavailable(thrown) : thrown;
    if (error instanceof ServiceUnavailableError) {
      return apiErrorResponse(error.status, error.detail, { "Retry-After": String(RETRY_AFTER_SECONDS) });
    }
    if (error instanceof ApiError) return apiErrorResponse(error.status, error.detail, error.headers);
    if (error instanceof DomainError) {
      // The JSON API speaks the SPEC's English messages, unless the caller asks for its page's language.
      const ns = error.message.includes(":") ? error.message.split(":")[0] : "common";
      const t = await getFixedTFor(detailLanguage(args.request), ["common", ns]);
      return apiErrorResponse(statusFor(error.kind), t(error.message, error.values));
    }
    if (error instanceof Response) {
      return apiErrorResponse(error.status, error.statusText || `API request failed: ${error.status}`);
    }
    console.warn("[api] unexpected failure:", error instanceof Error ? error.message : error);
    return apiErrorResponse(500, "Internal server error");
  }
}
