import { OAuth2Tokens } from "arctic";
import { Authenticator } from "remix-auth";
import { OAuth2Strategy } from "remix-auth-oauth2";
import {
  getDiscovery,
  HTTP_TIMEOUT_MS,
  nonceFor,
  resetTokenCaches,
  verifyIdToken,
  type Identity,
} from "./auth-tokens.server";
import { getConfig } from "../config/config.server";
import { cookieName, siteCookie } from "./cookies.server";
import { emailDomainOf } from "../accounts/organisation.server";

export { AuthenticationStrengthError } from "./auth-strength.server";
// The provider's discovery document and the verification of its tokens: auth-tokens.server.ts.
export {
  CLOCK_LEEWAY_SECONDS,
  getDiscovery,
  HTTP_TIMEOUT_MS,
  nonceFor,
  TOKEN_ALGORITHMS,
  verifyAccessToken,
  verifyIdToken,
  type Identity,
} from "./auth-tokens.server";

// OpenID Connect authorization code + PKCE through remix-auth-oauth2 (ADR 0003).
// The provider's tokens never reach the browser: the callback verifies the ID
// token here and keeps only a database session.

export const STATE_COOKIE = "skribent_oauth";

/**
 * Where to return after sign-in rides along in a short-lived cookie of its own (set by /auth/start, read and
 * cleared by /auth/callback, checked again on the way back).
 */
export function returnToCookie() {
  return siteCookie("skribent_return", { httpOnly: true, sameSite: "lax", maxAge: 600 });
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

let authenticator: Authenticator<Identity> | undefined;

/** For tests and configuration changes. */
export function resetOidcCaches() {
  resetTokenCaches();
  authenticator = undefined;
}

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
        // The state cookies follow the app's naming (`__Host-` when Secure, web/cookies.server.ts): host-only, Path=/.
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
 * identity (accounts/organisation.server.ts says what counts as that domain: no look-alikes, no subdomains).
 */
export function isOperator(user: { email: string | null; emailVerified: boolean }) {
  if (!user.emailVerified) return false;
  const domain = emailDomainOf(user.email);
  return domain !== null && domain === getConfig().operatorEmailDomain;
}
