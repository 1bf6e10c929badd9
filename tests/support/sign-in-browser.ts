import { expect } from "vitest";
import { loader as callbackLoader } from "~/routes/auth.callback";
import { loader as startLoader } from "~/routes/auth.start";
import { getConfig } from "~/services/config/config.server";
import { callRoute } from "../setup/app";

// A browser for the sign-in tests (oidc-callback, cookies-host-prefix): it keeps the app's cookies and drops those
// the app expires, and like a real browser it refuses a `__Host-` cookie that is not Secure, not for Path=/ or names
// a Domain (RFC 6265bis §4.1.3.2) — a deletion that breaks those rules leaves the cookie in place.

function keepsHostPrefix(setCookie: string) {
  const attributes = setCookie.split(";").slice(1);
  const has = (pattern: RegExp) => attributes.some((attribute) => pattern.test(attribute.trim()));
  return has(/^secure$/i) && has(/^path=\/$/i) && !has(/^domain=/i);
}

export function newBrowser() {
  const jar = new Map<string, string>();
  return {
    get cookie() {
      return [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    },
    keep(response: Response) {
      for (const setCookie of response.headers.getSetCookie()) {
        const [pair] = setCookie.split(";");
        const name = pair.slice(0, pair.indexOf("="));
        if (name.startsWith("__Host-") && !keepsHostPrefix(setCookie)) continue;
        if (/max-age=0/i.test(setCookie)) jar.delete(name);
        else jar.set(name, pair.slice(name.length + 1));
      }
      return response;
    },
  };
}
export type Browser = ReturnType<typeof newBrowser>;

export function appRequest(path: string, cookie: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (cookie) headers.set("Cookie", cookie);
  return new Request(new URL(path, getConfig().appUrl), { ...init, headers });
}

/** /auth/start, then the provider's authorization endpoint; returns where the provider sends the browser back. */
export async function goToProvider(browser: Browser) {
  const start = browser.keep(
    await callRoute(startLoader, appRequest("/auth/start?redirectTo=%2Fhelp", browser.cookie)),
  );
  expect(start.status).toBe(302);
  const answer = await fetch(start.headers.get("Location")!, { redirect: "manual" });
  expect(answer.status).toBe(302);
  const back = new URL(answer.headers.get("Location")!);
  expect(`${back.origin}${back.pathname}`).toBe(`${getConfig().appUrl}/auth/callback`);
  return { query: back.searchParams, cookieAtCallback: browser.cookie, start };
}

export async function callback(query: URLSearchParams, cookie: string) {
  return callRoute(callbackLoader, appRequest(`/auth/callback?${query}`, cookie));
}
