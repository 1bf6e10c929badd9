import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { loader as workspaceLoader } from "~/routes/_app";
import { loader as loginLoader } from "~/routes/login";
import { action as logoutAction } from "~/routes/logout";
import { resetOidcCaches } from "~/services/web/auth.server";
import { getConfig, setConfig, type Config } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { getFixedTFor } from "~/services/web/i18n.server";
import { readSession } from "~/services/web/session.server";
import { startFakeOidcProvider, type FakeOidcProvider, type IdTokenFault } from "../support/fake-oidc-provider";
import { appRequest, callback, goToProvider, newBrowser, type Browser } from "../support/sign-in-browser";
import { callRoute, setupTestApp, TEST_CLIENT } from "../setup/app";

// The callback turns a provider's answer into a session. Every answer that was forged, replayed or meant for
// another sign-in must end on the sign-in page with a message, without a session row and without a session
// cookie. The provider is a loopback fake (tests/support/fake-oidc-provider.ts) that can make its ID token lie.
// The same sign-in under an https APP_URL, with its `__Host-` cookies: cookies-host-prefix.test.ts.

setupTestApp({ env: { RATE_LIMIT_SIGNIN_PER_MINUTE: "1000" } });
let provider: FakeOidcProvider;
let httpConfig: Config;
let warn: MockInstance<typeof console.warn>;

beforeAll(async () => {
  provider = await startFakeOidcProvider({
    ...TEST_CLIENT,
    redirectUris: [TEST_CLIENT.redirectUri],
  });
  httpConfig = { ...getConfig(), oidc: { ...getConfig().oidc, issuer: provider.issuer } };
  setConfig(httpConfig);
  resetOidcCaches();
});
afterAll(async () => {
  resetOidcCaches();
  await provider.close();
});
beforeEach(() => {
  provider.reset();
  // The callback logs why it refused; the tests read that to be sure the right check refused.
  warn = vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => warn.mockRestore());

async function sessionCount() {
  const row = await getDb()
    .selectFrom("sessions")
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const sessionCookieOf = (response: Response) =>
  response.headers.getSetCookie().find((c) => c.startsWith("skribent_sid="));

/** A complete, successful sign-in in `browser`. */
async function signIn(browser: Browser) {
  const { query } = await goToProvider(browser);
  const response = browser.keep(await callback(query, browser.cookie));
  expect(response.status).toBe(200);
  return { response, query };
}

/** Refused: no session cookie, no session row, and the sign-in page says so in the user's language. */
async function expectRefused(response: Response, browser: Browser, sessionsBefore: number, why?: RegExp) {
  expect(response.status).toBe(302);
  expect(response.headers.get("Location")).toBe("/login?failed=1");
  expect(sessionCookieOf(response)).toBeUndefined();
  expect(await sessionCount()).toBe(sessionsBefore);
  if (why) expect(warn).toHaveBeenCalledWith("[auth] sign-in failed:", expect.stringMatching(why));
  browser.keep(response);
  const login = await callRoute(loginLoader, appRequest("/login?failed=1", browser.cookie));
  expect(login.status).toBe(200);
  const page = await login.json();
  expect(page).toMatchObject({ reason: "failed", autoContinue: false });
  const t = await getFixedTFor("de");
  expect(t(`login.${page.reason}`)).toBe("Die Anmeldung ist fehlgeschlagen. Bitte versuchen Sie es erneut.");
}

describe("the sign-in callback", () => {
  it("signs in when every check passes, with an HttpOnly, SameSite=Lax session cookie for the whole site", async () => {
    const before = await sessionCount();
    const browser = newBrowser();
    const { response } = await signIn(browser);
    expect(await response.json()).toMatchObject({ redirectTo: "/help" });
    const sid = sessionCookieOf(response)!;
    expect(sid).toMatch(/; HttpOnly/i);
    expect(sid).toMatch(/; SameSite=Lax/i);
    expect(sid).toMatch(/; Path=\/(;|$)/);
    expect(sid).not.toMatch(/; Secure/i); // APP_URL is http://
    expect(await sessionCount()).toBe(before + 1);
    const session = await readSession(appRequest("/", browser.cookie));
    expect(session.kind === "active" && session.user.email).toBe("lena.vogt@praxis.example");
    expect(provider.tokenRequests).toEqual([{ status: 200 }]);
  });
});

describe("a callback this browser did not start is refused before the code is redeemed", () => {
  it("refuses a state that differs from the one in the state cookie", async () => {
    const before = await sessionCount();
    const browser = newBrowser();
    const { query } = await goToProvider(browser);
    query.set("state", "forged-state-value");
    await expectRefused(await callback(query, browser.cookie), browser, before, /doesn't match/);
    expect(provider.tokenRequests).toEqual([]);
  });

  it("refuses a callback opened in another browser (no state cookie)", async () => {
    const before = await sessionCount();
    const { query } = await goToProvider(newBrowser());
    const otherBrowser = newBrowser();
    await expectRefused(await callback(query, otherBrowser.cookie), otherBrowser, before, /Missing state on cookie/);
    expect(provider.tokenRequests).toEqual([]);
  });

  it("refuses the state of an earlier, finished sign-in", async () => {
    const browser = newBrowser();
    const earlier = await signIn(browser);
    browser.keep(
      await callRoute(
        logoutAction,
        appRequest("/logout", browser.cookie, { method: "POST", headers: { "Sec-Fetch-Site": "same-origin" } }),
      ),
    );
    const before = await sessionCount();
    const { query } = await goToProvider(browser);
    query.set("state", earlier.query.get("state")!);
    await expectRefused(await callback(query, browser.cookie), browser, before, /doesn't match/);
    expect(provider.tokenRequests).toHaveLength(1); // the earlier sign-in's
  });

  it("sends a user who declined at the provider back to sign-in", async () => {
    const before = await sessionCount();
    provider.settings.deny = true;
    const browser = newBrowser();
    const { query } = await goToProvider(browser);
    expect(query.get("error")).toBe("access_denied");
    await expectRefused(await callback(query, browser.cookie), browser, before);
    expect(provider.tokenRequests).toEqual([]);
  });
});

describe("a replayed code", () => {
  it("signs in once; the same callback again gets no second session", async () => {
    const browser = newBrowser();
    const { query, cookieAtCallback } = await goToProvider(browser);
    const before = await sessionCount();
    expect((await callback(query, cookieAtCallback)).status).toBe(200);
    expect(await sessionCount()).toBe(before + 1);
    // Replayed with the very cookie the first callback carried, from a browser that has no session.
    const replay = newBrowser();
    await expectRefused(await callback(query, cookieAtCallback), replay, before + 1, /invalid_grant/);
    expect(provider.tokenRequests).toEqual([{ status: 200 }, { status: 400, error: "invalid_grant" }]);
  });
});

describe("a redirected token request", () => {
  it("is not followed: the code and the client secret go nowhere else, and the sign-in is refused", async () => {
    const posted: string[] = [];
    const elsewhere = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk));
      req.on("end", () => {
        posted.push(body);
        res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    try {
      provider.settings.tokenRedirect = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/token`;
      const before = await sessionCount();
      const browser = newBrowser();
      const { query } = await goToProvider(browser);
      await expectRefused(await callback(query, browser.cookie), browser, before, /Token exchange failed: 307/);
      expect(posted).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => elsewhere.close(() => resolve()));
    }
  });
});

describe("an ID token that does not hold up is refused, though the provider issued it", () => {
  const cases: Array<[IdTokenFault, string, RegExp]> = [
    ["wrong-nonce", "carries another sign-in's nonce", /nonce/],
    ["no-nonce", "carries no nonce", /nonce/],
    ["wrong-audience", "is meant for another client", /"aud"/],
    ["expired", "expired ten minutes ago (leeway 60 s)", /"exp"/],
    ["issued-in-future", "was issued an hour in the future", /iat|future/],
    ["wrong-issuer", "names another issuer", /"iss"/],
    ["other-key", "is signed by another key under the published kid", /signature/],
    ["alg-none", "is unsigned (alg none)", /"alg"/],
    ["hs256-with-public-key", "is HMAC-signed with the public key (alg confusion)", /"alg"/],
    ["no-sub", "names no subject", /subject/],
  ];

  it.each(cases)("%s: refuses a token that %s", async (fault, _what, why) => {
    const before = await sessionCount();
    provider.settings.fault = fault;
    const browser = newBrowser();
    const { query } = await goToProvider(browser);
    await expectRefused(await callback(query, browser.cookie), browser, before, why);
    expect(provider.tokenRequests).toEqual([{ status: 200 }]);
  });

  it("refuses a valid ID token replayed from another sign-in", async () => {
    provider.settings.account = { sub: "fake-jonas-keller", email: "jonas.keller@praxis.example", name: "J. Keller" };
    await signIn(newBrowser());
    const before = await sessionCount();
    provider.reset();
    provider.settings.fault = "replay-previous";
    const browser = newBrowser();
    const { query } = await goToProvider(browser);
    await expectRefused(await callback(query, browser.cookie), browser, before, /nonce/);
    expect(provider.tokenRequests).toEqual([{ status: 200 }]);
  });
});

describe("session cookie and logout", () => {
  it("logout deletes the session row; the old cookie no longer opens the workspace", async () => {
    const browser = newBrowser();
    await signIn(browser);
    const oldCookie = browser.cookie;
    expect((await callRoute(workspaceLoader, appRequest("/", oldCookie))).status).toBe(200);
    const before = await sessionCount();

    const crossSite = await callRoute(
      logoutAction,
      appRequest("/logout", oldCookie, { method: "POST", headers: { "Sec-Fetch-Site": "cross-site" } }),
    );
    expect(crossSite.status).toBe(403);
    expect(await sessionCount()).toBe(before);

    const logout = await callRoute(
      logoutAction,
      appRequest("/logout", oldCookie, { method: "POST", headers: { "Sec-Fetch-Site": "same-origin" } }),
    );
    expect(logout.status).toBe(302);
    const location = new URL(logout.headers.get("Location")!);
    expect(`${location.origin}${location.pathname}`).toBe(`${provider.issuer}/logout`);
    expect(location.searchParams.get("id_token_hint")).toBe(provider.issued.at(-1));
    expect(sessionCookieOf(logout)).toMatch(/Max-Age=0/i);
    expect(await sessionCount()).toBe(before - 1);

    const workspace = await callRoute(workspaceLoader, appRequest("/", oldCookie));
    expect(workspace.status).toBe(302);
    expect(workspace.headers.get("Location")).toMatch(/^\/login\?redirectTo=/);
    expect((await readSession(appRequest("/", oldCookie))).kind).toBe("none");
  });
});
