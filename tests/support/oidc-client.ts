import { createHash, randomBytes } from "node:crypto";

// Test helpers that act as an OAuth client and as its user's browser against the
// development provider, so API tests obtain a real bearer token the way an
// external client would: authorization code + PKCE, a cookie-carrying browser,
// the account chosen on the provider's own page, and a token request.

export type DevDiscovery = {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  end_session_endpoint?: string;
  code_challenge_methods_supported?: string[];
  [key: string]: unknown;
};

export type CookieJar = {
  /** fetch that sends and stores cookies and never follows redirects. */
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
  /** The Cookie header the jar would send to `url`. */
  cookieHeader(url: string | URL): string;
};

type StoredCookie = { name: string; value: string; host: string; path: string; expiresAt?: number };

function defaultCookiePath(url: URL): string {
  // RFC 6265 §5.1.4: the directory of the request path.
  const { pathname } = url;
  if (!pathname.startsWith("/") || pathname.lastIndexOf("/") === 0) return "/";
  return pathname.slice(0, pathname.lastIndexOf("/"));
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

/** A minimal browser cookie store: host-only cookies, paths and expiry; ports are ignored as browsers do. */
export function createCookieJar(): CookieJar {
  const cookies = new Map<string, StoredCookie>();

  function store(url: URL, setCookie: string) {
    const [pair = "", ...attributes] = setCookie.split(";");
    const separator = pair.indexOf("=");
    if (separator <= 0) return;
    const cookie: StoredCookie = {
      name: pair.slice(0, separator).trim(),
      value: pair.slice(separator + 1).trim(),
      host: url.hostname,
      path: defaultCookiePath(url),
    };
    let maxAge: number | undefined;
    for (const attribute of attributes) {
      const [rawKey = "", ...rest] = attribute.split("=");
      const key = rawKey.trim().toLowerCase();
      const value = rest.join("=").trim();
      if (key === "path" && value.startsWith("/")) cookie.path = value;
      if (key === "expires") {
        const time = Date.parse(value);
        if (!Number.isNaN(time)) cookie.expiresAt = time;
      }
      if (key === "max-age" && /^-?\d+$/.test(value)) maxAge = Number(value);
    }
    // Max-Age wins over Expires (RFC 6265 §5.3 step 3).
    if (maxAge !== undefined) cookie.expiresAt = Date.now() + maxAge * 1000;
    const key = `${cookie.host}|${cookie.path}|${cookie.name}`;
    if (cookie.expiresAt !== undefined && cookie.expiresAt <= Date.now()) {
      cookies.delete(key);
    } else {
      cookies.set(key, cookie);
    }
  }

  function cookieHeader(target: string | URL): string {
    const url = new URL(target);
    const now = Date.now();
    return [...cookies.values()]
      .filter((c) => c.host === url.hostname && pathMatches(url.pathname, c.path))
      .filter((c) => c.expiresAt === undefined || c.expiresAt > now)
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }

  async function jarFetch(target: string | URL, init: RequestInit = {}): Promise<Response> {
    const url = new URL(target);
    const headers = new Headers(init.headers);
    const cookie = cookieHeader(url);
    if (cookie) headers.set("Cookie", cookie);
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const setCookie of response.headers.getSetCookie()) store(url, setCookie);
    return response;
  }

  return { fetch: jarFetch, cookieHeader };
}

export function createPkce(): { codeVerifier: string; codeChallenge: string } {
  const codeVerifier = randomBytes(32).toString("base64url");
  const codeChallenge = createHash("sha256").update(codeVerifier).digest("base64url");
  return { codeVerifier, codeChallenge };
}

export async function fetchDiscovery(issuer: string): Promise<DevDiscovery> {
  const response = await fetch(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`discovery failed: ${response.status}`);
  return (await response.json()) as DevDiscovery;
}

function decodeHtmlAttribute(value: string): string {
  return value
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}

/** The first POST form of a page: its action and hidden inputs. */
export function parsePostForm(html: string, pageUrl: string | URL): { action: URL; fields: URLSearchParams } {
  const form = /<form\b[^>]*>[\s\S]*?<\/form>/i.exec(html)?.[0];
  if (!form) throw new Error("no form on the page");
  const action = /\baction="([^"]*)"/i.exec(form)?.[1];
  const fields = new URLSearchParams();
  for (const input of form.matchAll(/<input\b[^>]*>/gi)) {
    const tag = input[0];
    if (!/\btype="hidden"/i.test(tag)) continue;
    const name = /\bname="([^"]*)"/i.exec(tag)?.[1];
    const value = /\bvalue="([^"]*)"/i.exec(tag)?.[1] ?? "";
    if (name) fields.append(decodeHtmlAttribute(name), decodeHtmlAttribute(value));
  }
  return { action: new URL(decodeHtmlAttribute(action ?? ""), pageUrl), fields };
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

function sameEndpoint(candidate: URL, redirectUri: string): boolean {
  const expected = new URL(redirectUri);
  return candidate.origin === expected.origin && candidate.pathname === expected.pathname;
}

export type AuthorizeArgs = {
  issuer: string;
  clientId: string;
  redirectUri: string;
  accountId: string;
  audience?: string;
  scope?: string;
  /** Extra authorization request parameters, e.g. ui_locales or prompt. */
  extraParams?: Record<string, string>;
  /** Reuse a browser, e.g. to sign out afterwards with the same provider session. */
  jar?: CookieJar;
  /**
   * An authorization URL built by someone else (the app under test): followed
   * as-is, its state is returned and the code verifier stays with its author.
   */
  authorizationUrl?: string;
};

/**
 * Plays the browser up to the redirect back to the client and returns that redirect,
 * whether it carries a code or an error (the unverified account ends in access_denied).
 */
export async function authorizeAtDevProvider(
  args: AuthorizeArgs,
): Promise<{ callback: URL; codeVerifier: string; state: string; jar: CookieJar }> {
  const discovery = await fetchDiscovery(args.issuer);
  const jar = args.jar ?? createCookieJar();
  const { codeVerifier, codeChallenge } = createPkce();
  const state = randomBytes(16).toString("base64url");

  if (args.authorizationUrl) {
    const given = new URL(args.authorizationUrl);
    return followAuthorization(given, args, jar, "", given.searchParams.get("state") ?? "");
  }
  const authorization = new URL(discovery.authorization_endpoint);
  authorization.search = new URLSearchParams({
    client_id: args.clientId,
    redirect_uri: args.redirectUri,
    response_type: "code",
    scope: args.scope ?? "openid profile email",
    state,
    code_challenge: codeChallenge,
    code_challenge_method: "S256",
    ...(args.audience ? { audience: args.audience } : {}),
    ...args.extraParams,
  }).toString();
  return followAuthorization(authorization, args, jar, codeVerifier, state);
}

async function followAuthorization(
  authorization: URL,
  args: AuthorizeArgs,
  jar: CookieJar,
  codeVerifier: string,
  state: string,
): Promise<{ callback: URL; codeVerifier: string; state: string; jar: CookieJar }> {
  let url = authorization;
  let response = await jar.fetch(url);
  let accountChosen = false;
  for (let hop = 0; hop < 20; hop += 1) {
    if (isRedirect(response.status)) {
      const location = response.headers.get("location");
      if (!location) throw new Error(`redirect without Location from ${url.href}`);
      url = new URL(location, url);
      if (sameEndpoint(url, args.redirectUri)) {
        return { callback: url, codeVerifier, state, jar };
      }
      response = await jar.fetch(url);
      continue;
    }
    const body = await response.text();
    if (response.status === 200 && !accountChosen && /\/interaction\/[^/]+$/.test(url.pathname)) {
      if (!body.includes(`value="${args.accountId}"`)) {
        throw new Error(`account ${args.accountId} is not offered on the provider's sign-in page`);
      }
      const form = parsePostForm(body, url);
      form.fields.set("accountId", args.accountId);
      accountChosen = true;
      url = form.action;
      response = await jar.fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form.fields.toString(),
      });
      continue;
    }
    throw new Error(`unexpected ${response.status} at ${url.href}: ${body.slice(0, 500)}`);
  }
  throw new Error("too many redirects at the development provider");
}

export async function signInAtDevProvider(args: {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  accountId: string;
  audience?: string;
  scope?: string;
  extraParams?: Record<string, string>;
  jar?: CookieJar;
  authorizationUrl?: string;
}): Promise<{ code: string; codeVerifier: string; state: string }> {
  const { callback, codeVerifier, state } = await authorizeAtDevProvider(args);
  const error = callback.searchParams.get("error");
  if (error) {
    throw new Error(`sign-in failed: ${error} ${callback.searchParams.get("error_description") ?? ""}`.trim());
  }
  if (callback.searchParams.get("state") !== state) throw new Error("state mismatch on the callback");
  const code = callback.searchParams.get("code");
  if (!code) throw new Error(`no code on the callback ${callback.href}`);
  return { code, codeVerifier, state };
}

/** The raw token response, so tests can assert on failures (e.g. invalid_grant). */
export async function exchangeCodeAtDevProvider(args: {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  code: string;
  codeVerifier: string;
  clientAuth?: "client_secret_basic" | "client_secret_post";
}): Promise<{ status: number; body: Record<string, unknown> }> {
  const discovery = await fetchDiscovery(args.issuer);
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: args.code,
    redirect_uri: args.redirectUri,
    code_verifier: args.codeVerifier,
  });
  const headers = new Headers({
    "Content-Type": "application/x-www-form-urlencoded",
    Accept: "application/json",
  });
  if (args.clientAuth === "client_secret_post") {
    form.set("client_id", args.clientId);
    form.set("client_secret", args.clientSecret);
  } else {
    // RFC 6749 §2.3.1: both parts are form-encoded before base64.
    const credentials = `${encodeURIComponent(args.clientId)}:${encodeURIComponent(args.clientSecret)}`;
    headers.set("Authorization", `Basic ${Buffer.from(credentials).toString("base64")}`);
  }
  const response = await fetch(discovery.token_endpoint, { method: "POST", headers, body: form });
  const body = (await response.json()) as Record<string, unknown>;
  return { status: response.status, body };
}

export async function getDevAccessToken(args: {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  accountId: string;
  audience: string;
  scope?: string;
  extraParams?: Record<string, string>;
  jar?: CookieJar;
}): Promise<{ access_token: string; id_token: string; expires_in: number }> {
  const { code, codeVerifier } = await signInAtDevProvider(args);
  const { status, body } = await exchangeCodeAtDevProvider({ ...args, code, codeVerifier });
  const { access_token, id_token, expires_in } = body;
  if (
    status !== 200 ||
    typeof access_token !== "string" ||
    typeof id_token !== "string" ||
    typeof expires_in !== "number"
  ) {
    throw new Error(`token request failed: ${status} ${JSON.stringify(body)}`);
  }
  return { access_token, id_token, expires_in };
}
