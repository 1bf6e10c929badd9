import { createHmac, timingSafeEqual } from "node:crypto";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { requireApiScope } from "./api-scope.server";
import { requireAcceptedAcr } from "./auth-strength.server";
import { getConfig } from "../config/config.server";
import { orgClaimOf } from "../accounts/organisation.server";
import type { UserIdentity } from "~/models/user.server";

// The identity provider's discovery document and keys, and the verification of the tokens it signs: the ID token of
// a sign-in (web/auth.server.ts's strategy) and the bearer access tokens of API clients (web/api.server.ts).

export const HTTP_TIMEOUT_MS = 10_000; // SPEC §7: HTTP time-out 10 s
export const CLOCK_LEEWAY_SECONDS = 60; // SPEC §7: token leeway 60 s
/**
 * The signature algorithms an ID or access token may use (ASVS 9.1.2): the asymmetric ones providers publish keys
 * for. Never `none`, never an HMAC (whose key would be the provider's public key: alg confusion), whatever the token's
 * header or a key in the provider's JWKS says.
 */
export const TOKEN_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

export type Identity = UserIdentity & {
  idToken: string;
  /** The configured organisation claim (OIDC_ORG_CLAIM), null when not configured or not in the token. */
  orgClaim: boolean | null;
};

type Discovery = {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  end_session_endpoint?: string;
};

let discovery: Promise<Discovery> | undefined;
let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

export function getDiscovery(): Promise<Discovery> {
  discovery ??= fetchDiscovery(getConfig().oidc.issuer).catch((error) => {
    discovery = undefined; // try again on the next request
    throw error;
  });
  return discovery;
}

async function fetchDiscovery(issuer: string): Promise<Discovery> {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`, {
    headers: { Accept: "application/json" },
    signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`OpenID discovery failed with status ${response.status}`);
  const found = (await response.json()) as Discovery;
  // OIDC Discovery §4.3: the document must name the issuer it was fetched for, or its keys and endpoints are
  // another provider's (a mix-up, or a proxy answering for it). Tokens are then checked against that issuer.
  const same = (a: string) => a.replace(/\/+$/, "");
  if (typeof found.issuer !== "string" || same(found.issuer) !== same(issuer)) {
    throw new Error("OpenID discovery names another issuer than OIDC_ISSUER");
  }
  return found;
}

async function getJwks() {
  const { jwks_uri } = await getDiscovery();
  jwks ??= createRemoteJWKSet(new URL(jwks_uri), { timeoutDuration: HTTP_TIMEOUT_MS });
  return jwks;
}

/** For tests and configuration changes (web/auth.server.ts's resetOidcCaches also forgets the sign-in strategy). */
export function resetTokenCaches() {
  discovery = undefined;
  jwks = undefined;
}

/**
 * The ID token's nonce, bound to this sign-in's state (OIDC Core §3.1.2.1, §15.5.2). remix-auth-oauth2 already ties
 * the state to the browser's state cookie before the callback verifies anything, so a nonce derived from the state
 * with the cookie secret ties the ID token to that browser too, with nothing more to store. A token replayed from
 * another sign-in, or minted without this request, carries another nonce or none.
 */
export function nonceFor(state: string, secret = getConfig().cookieSecrets[0]) {
  return createHmac("sha256", secret).update(`oidc-nonce:${state}`).digest("base64url");
}

/** Any secret of the COOKIE_SECRET rotation list: a sign-in started just before a rotation still completes. */
function nonceMatches(claim: unknown, state: string | null) {
  if (typeof claim !== "string" || !state) return false;
  const given = Buffer.from(claim);
  return getConfig().cookieSecrets.some((secret) => {
    const expected = Buffer.from(nonceFor(state, secret));
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** Verifies the callback's ID token: signature, issuer, audience (this client), expiry and this sign-in's nonce. */
export async function verifyIdToken(idToken: string, state: string | null): Promise<Identity> {
  const { oidc } = getConfig();
  const { issuer } = await getDiscovery();
  const { payload } = await jwtVerify(idToken, await getJwks(), {
    algorithms: TOKEN_ALGORITHMS,
    issuer,
    audience: oidc.clientId,
    clockTolerance: CLOCK_LEEWAY_SECONDS,
    requiredClaims: ["exp", "iat"],
  });
  refuseFutureIssue(payload);
  if (!nonceMatches(payload.nonce, state)) throw new Error("ID token nonce does not match this sign-in");
  const identity = identityFromClaims(payload, issuer, idToken);
  requireAcceptedAcr(payload, identity);
  return identity;
}

/** jose compares `iat` with the clock only when maxTokenAge is set: a token "issued" beyond the leeway is refused. */
function refuseFutureIssue(payload: JWTPayload) {
  if ((payload.iat ?? 0) > Math.floor(Date.now() / 1000) + CLOCK_LEEWAY_SECONDS) {
    throw new Error("token issued in the future");
  }
}

function identityFromClaims(payload: JWTPayload, issuer: string, idToken: string): Identity {
  if (!payload.sub) throw new Error("ID token without subject");
  const str = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : null);
  return {
    issuer,
    subject: payload.sub,
    email: str(payload.email)?.toLowerCase() ?? null,
    emailVerified: payload.email_verified === true,
    name: str(payload.name),
    locale: str(payload.locale),
    idToken,
    orgClaim: orgClaimOf(payload),
  };
}

/**
 * Verifies a bearer access token from the configured provider (issuer, audience, expiry); with OIDC_ACR_VALUES, its
 * `acr` (RFC 9068 §2.2.1): the API door asks for the same strength as the sign-in, or it would be the way round; and
 * with OIDC_API_SCOPE, its granted scopes (ADR 0021), after the strength: a client first learns to sign in again.
 */
export async function verifyAccessToken(token: string) {
  const { oidc } = getConfig();
  const { issuer } = await getDiscovery();
  const { payload } = await jwtVerify(token, await getJwks(), {
    algorithms: TOKEN_ALGORITHMS,
    issuer,
    audience: oidc.audience,
    clockTolerance: CLOCK_LEEWAY_SECONDS,
  });
  refuseFutureIssue(payload);
  if (!payload.sub) throw new Error("access token without subject");
  requireAcceptedAcr(payload, { issuer, subject: payload.sub });
  requireApiScope(payload, { issuer, subject: payload.sub });
  return {
    issuer,
    subject: payload.sub,
    email: typeof payload.email === "string" ? payload.email.toLowerCase() : null,
    // Access tokens rarely carry email_verified: null when silent (the caller decides from what it knows).
    emailVerified: typeof payload.email_verified === "boolean" ? payload.email_verified : null,
    orgClaim: orgClaimOf(payload),
  };
}
