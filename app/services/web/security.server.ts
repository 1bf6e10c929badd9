import { randomBytes } from "node:crypto";

// Security baseline (ARCHITECTURE.md): headers on every document and API answer,
// a per-response CSP nonce, and a same-origin check for state-changing requests.

export function createNonce() {
  return randomBytes(16).toString("base64");
}

/** `connectTargets`: origins scripts may reach besides our own (direct-mode live recognition, ADR 0013). */
export function contentSecurityPolicy(options: { nonce: string; formTargets: string[]; connectTargets?: string[] }) {
  return [
    "default-src 'self'",
    `script-src 'nonce-${options.nonce}' 'strict-dynamic'`,
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "font-src 'self'",
    `connect-src 'self' ${(options.connectTargets ?? []).join(" ")}`.trim(),
    "object-src 'none'",
    "base-uri 'none'",
    // Chromium applies form-action to the redirect after a POST (logout goes to the provider).
    `form-action 'self' ${options.formTargets.join(" ")}`.trim(),
    "frame-ancestors 'none'",
  ].join("; ");
}

export function applySecurityHeaders(
  headers: Headers,
  options: { appUrl: string; nonce?: string; formTargets?: string[]; connectTargets?: string[] },
) {
  if (options.nonce)
    headers.set(
      "Content-Security-Policy",
      contentSecurityPolicy({
        nonce: options.nonce,
        formTargets: options.formTargets ?? [],
        connectTargets: options.connectTargets,
      }),
    );
  else headers.set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  headers.set("X-Content-Type-Options", "nosniff");
  headers.set("Referrer-Policy", "same-origin");
  headers.set("X-Frame-Options", "DENY");
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Permissions-Policy", "microphone=(self), camera=(), geolocation=(), payment=()");
  if (isHttpsOutsideLocalhost(options.appUrl))
    headers.set("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
  return headers;
}

function isHttpsOutsideLocalhost(appUrl: string) {
  const url = new URL(appUrl);
  return url.protocol === "https:" && !["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/** The session cookie's name (session.server.ts); under an https APP_URL with the `__Host-` prefix (web/cookies.server.ts). */
export const SESSION_COOKIE = "skribent_sid";

function carriesSessionCookie(request: Request) {
  const cookies = request.headers.get("Cookie") ?? "";
  return cookies.split(";").some((part) => {
    const name = part.split("=")[0].trim();
    return name === SESSION_COOKIE || name === `__Host-${SESSION_COOKIE}`;
  });
}

function originOf(url: string) {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * Rejects cross-site state-changing requests: Fetch-Metadata first, the Origin header for browsers that send no
 * Fetch-Metadata, the Referer for browsers that send neither (locked-down hospital browsers exist; the app's own
 * pages send a same-origin Referer, Referrer-Policy: same-origin). A write that carries the session cookie and none
 * of the three is refused: nothing shows it came from the app's own pages (security check, issue 22). Without the
 * session cookie such a request authenticates nothing by ambient credential (curl; bearer-token API clients, which
 * the callers let through before asking) and passes.
 */
export function isCrossSiteWrite(request: Request, appUrl: string, { cookieAuthenticated = true } = {}) {
  if (safeMethods.has(request.method.toUpperCase())) return false;
  const site = request.headers.get("Sec-Fetch-Site");
  if (site) return site !== "same-origin" && site !== "none";
  const appOrigin = new URL(appUrl).origin;
  const origin = request.headers.get("Origin");
  if (origin) return origin !== appOrigin;
  const referer = request.headers.get("Referer");
  if (referer) return originOf(referer) !== appOrigin;
  // A route whose credential is not the cookie (a presigned storage URL) is judged as any cookie-less client.
  return cookieAuthenticated && carriesSessionCookie(request);
}

/** Only same-origin, path-absolute targets; everything else becomes the fallback. */
export function safeRedirect(to: FormDataEntryValue | string | null | undefined, fallback = "/") {
  if (!to || typeof to !== "string") return fallback;
  if (!to.startsWith("/") || to.startsWith("//") || to.startsWith("/\\")) return fallback;
  // Control characters and backslashes let browsers reinterpret the target.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\\]/.test(to)) return fallback;
  try {
    const url = new URL(to, "http://x.invalid");
    if (url.origin !== "http://x.invalid") return fallback;
    // The target becomes a Location header: as the URL parser writes it, percent-encoded, it is plain ASCII. Taken
    // as given, a character past U+00FF made the redirect throw (a 500), and one below went out as a raw byte.
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return fallback;
  }
}
