import { createHmac, timingSafeEqual } from "node:crypto";
import { OAuth2Tokens } from "arctic";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { Authenticator } from "remix-auth";
import { OAuth2Strategy } from "remix-auth-oauth2";
import { requireApiScope } from "./api-scope.server";
import { requireAcceptedAcr } from "./auth-strength.server";
import { getConfig } from "./config.server";
import { cookieName, siteCookie } from "./cookies.server";
import { emailDomainOf, orgClaimOf } from "./organisation.server";

export { AuthenticationStrengthError } from "./auth-strength.server";

// OpenID Connect authorization code + PKCE through remix-auth-oauth2 (ADR 0003).
// The provider's tokens never reach the browser: the callback verifies the ID
// token here and keeps only a database session.

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
export const STATE_COOKIE = "skribent_oauth";

/**
 * Where to return after sign-in rides along in a short-lived cookie of its own (set by /auth/start, read and
 * cleared by /auth/callback, checked again on the way back).
 */
export function returnToCookie() {
  return siteCookie("skribent_return", { httpOnly: true, sameSite: "lax", maxAge: 600 });
}

export type Identity = {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  locale: string | null;
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

/** For tests and configuration changes. */
export function resetOidcCaches() {
  discovery = undefined;
  jwks = undefined;
  authenticator = undefined;
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

class OidcStrategy extends OAuth2Strategy<Identity> {
  name = "oidc";

  protected override authorizationParams(params: URLSearchParams, request: Request) {
    const merged = super.authorizationParams(params, request);
    const state = merged.get("state");
    if (state) merged.set("nonce", nonceFor(state));
    // A request, not a guarantee (OIDC Core §5.5.1.1: a voluntary claim): it lets the provider step up to the level
    // asked for; what the ID token then says is checked at the callback.
    const { acrValues, prompt } = getConfig().oidc;
    if (acrValues) merged.set("acr_values", acrValues.join(" "));
    // OIDC_PROMPT=login: the provider asks again even while it holds a session (ASVS 7.6.2, OIDC Core §3.1.2.1).
    if (prompt) merged.set("prompt", prompt);
    return merged;
  }

  // arctic's token request has no time-out; the provider gets 10 s (SPEC §7).
  protected override async validateAuthorizationCode(code: string, codeVerifier: string) {
    const { oidc } = getConfig();
    const { token_endpoint } = await getDiscovery();
    const body = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      code_verifier: codeVerifier,
      redirect_uri: callbackUrl(),
      client_id: oidc.clientId,
      client_secret: oidc.clientSecret,
    });
    // Not followed (ASVS 15.3.2): a 307/308 would send the code and the client secret on to wherever it points.
    const response = await fetch(token_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    const data = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof data.id_token !== "string") {
      throw new Error(`Token exchange failed: ${String(data.error ?? response.status)}`);
    }
    return new OAuth2Tokens(data);
  }
}

function callbackUrl() {
  return `${getConfig().appUrl}/auth/callback`;
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

let authenticator: Authenticator<Identity> | undefined;

export async function getAuthenticator() {
  if (authenticator) return authenticator;
  const { oidc, secureCookies } = getConfig();
  const endpoints = await getDiscovery();
  const instance = new Authenticator<Identity>();
  instance.use(
    new OidcStrategy(
      {
        clientId: oidc.clientId,
        clientSecret: oidc.clientSecret,
        authorizationEndpoint: endpoints.authorization_endpoint,
        tokenEndpoint: endpoints.token_endpoint,
        redirectURI: callbackUrl(),
        scopes: ["openid", "profile", "email"],
        audience: oidc.audience,
        // The state cookies follow the app's naming (`__Host-` when Secure, cookies.server.ts): host-only, Path=/.
        cookie: {
          name: cookieName(STATE_COOKIE),
          httpOnly: true,
          sameSite: "Lax",
          ...(secureCookies ? { secure: true as const } : {}),
          path: "/",
          maxAge: 600,
        },
      },
      async ({ request, tokens }) => verifyIdToken(tokens.idToken(), new URL(request.url).searchParams.get("state")),
    ),
  );
  authenticator = instance;
  return instance;
}

/**
 * remix-auth-oauth2 leaves its `<name>:<uuid>` state cookies behind (STACK-NOTES pitfall 7). A `__Host-` cookie is
 * only replaced by a Set-Cookie that is Secure too: without it the browser would ignore the deletion.
 */
export function clearStateCookies(request: Request): string[] {
  const header = request.headers.get("Cookie") ?? "";
  const secure = getConfig().secureCookies ? "; Secure" : "";
  return header
    .split(";")
    .map((part) => part.trim().split("=")[0])
    .filter((name) => name.startsWith(cookieName(STATE_COOKIE)))
    .map((name) => `${name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure}`);
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

export async function endSessionUrl(idToken: string | null, language: string) {
  const { end_session_endpoint } = await getDiscovery();
  if (!end_session_endpoint) return null;
  const url = new URL(end_session_endpoint);
  if (idToken) url.searchParams.set("id_token_hint", idToken);
  url.searchParams.set("client_id", getConfig().oidc.clientId);
  url.searchParams.set("post_logout_redirect_uri", `${getConfig().appUrl}/login?signedOut=1`);
  url.searchParams.set("ui_locales", language);
  return url.toString();
}

/** SPEC §2: the provider says the e-mail address must be verified first. */
export function isEmailVerificationError(error: string | null, description: string | null) {
  return error === "access_denied" && /verif/i.test(description ?? "") && /e-?mail/i.test(description ?? "");
}

/**
 * Admin = a verified e-mail address in exactly the operator's own domain, decided on the server from the verified
 * identity (organisation.server.ts says what counts as that domain: no look-alikes, no subdomains).
 */
export function isOperator(user: { email: string | null; emailVerified: boolean }) {
  if (!user.emailVerified) return false;
  const domain = emailDomainOf(user.email);
  return domain !== null && domain === getConfig().operatorEmailDomain;
}
