import { PatientRecordError } from "./contract.server";

import { discard, readJson, type Call, type MFilesHttp, type Session } from "./mfiles-http.server";
import { isRecord } from "./mfiles-objects.server";

// Logging in to M-Files and keeping the token (PROTOCOLS.md §4): a token comes back even for wrong
// credentials, so a 401/403 on a token just issued that has not worked yet is final (`unauthorized`),
// while on a cached token, or one that worked before, it means "expired": log in again once per call
// and retry once. The cookies of the token reply (`mfilesmsm`) go back on every later call.

/** Sent as `Expiration`: a leaked token dies on its own. Renewed a minute before it runs out. */
const TOKEN_LIFETIME_MS = 60 * 60 * 1000;
const TOKEN_RENEW_MARGIN_MS = 60 * 1000;

function setCookies(headers: Headers): string[] {
  const withGetter = headers as Headers & { getSetCookie?: () => string[] };
  if (typeof withGetter.getSetCookie === "function") return withGetter.getSetCookie();
  // Remix's fetch polyfill (remix-serve without single fetch) joins them with commas.
  const joined = headers.get("set-cookie");
  return joined ? joined.split(/,(?=\s*[^;,=\s]+=)/) : [];
}

function cookieHeader(headers: Headers): string | null {
  const pairs = setCookies(headers)
    .map((cookie) => cookie.split(";")[0].trim())
    .filter((pair) => /^[^=\s]+=/.test(pair));
  return pairs.length > 0 ? pairs.join("; ") : null;
}

export function isAuthFailure(status: number) {
  return status === 401 || status === 403;
}

export type MFilesSessions = {
  authenticate(call: Call): Promise<Session>;
  forget(session: Session | null): void;
  authorizedGet(call: Call, url: URL): Promise<Response>;
};

/** The login and the cached session of one record source. `vaultGuid` in its braced form. */
export function createMFilesSessions(
  { endpoint, send }: MFilesHttp,
  config: { username: string; password: string },
  vaultGuid: string,
): MFilesSessions {
  let cached: Session | null = null;

  async function authenticate(call: Call): Promise<Session> {
    const expiration = Date.now() + TOKEN_LIFETIME_MS;
    const response = await send(call, endpoint("/server/authenticationtokens"), {
      method: "POST",
      body: JSON.stringify({
        Username: config.username,
        Password: config.password,
        VaultGuid: vaultGuid,
        Expiration: new Date(expiration).toISOString(),
      }),
    });
    if (!response.ok) {
      discard(response);
      if (isAuthFailure(response.status)) throw new PatientRecordError("unauthorized");
      throw new PatientRecordError("unavailable", `M-Files token request failed (HTTP ${response.status})`);
    }
    const cookie = cookieHeader(response.headers);
    const reply = await readJson(response);
    const token = isRecord(reply) && typeof reply.Value === "string" ? reply.Value : "";
    if (!token) throw new PatientRecordError("unavailable", "M-Files token reply carries no token");
    const session = { token, cookie, renewAt: expiration - TOKEN_RENEW_MARGIN_MS, proven: false };
    cached = session;
    call.session = session;
    call.fresh = true;
    return session;
  }

  function forget(session: Session | null) {
    if (cached && cached === session) cached = null;
  }

  /**
   * GET with the session token. A 401/403 on a token that worked before, or came from the cache, means
   * it expired: log in again (once per call) and retry once. On a token just issued it is final.
   */
  async function authorizedGet(call: Call, url: URL): Promise<Response> {
    if (!call.session) {
      call.session = cached && cached.renewAt > Date.now() ? cached : await authenticate(call);
    }
    let session = call.session;
    let response = await send(call, url, { session });
    if (isAuthFailure(response.status) && !call.reauthenticated && (!call.fresh || session.proven)) {
      discard(response);
      forget(session);
      call.reauthenticated = true;
      session = await authenticate(call);
      response = await send(call, url, { session });
    }
    if (isAuthFailure(response.status)) {
      discard(response);
      forget(session);
      throw new PatientRecordError("unauthorized");
    }
    session.proven = true;
    return response;
  }

  return { authenticate, forget, authorizedGet };
}
