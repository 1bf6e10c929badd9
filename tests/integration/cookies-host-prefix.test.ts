import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loader as workspaceLoader } from "~/routes/_app";
import { readViewPreference, rememberView } from "~/routes/_app.arztbriefe.$/view-preference.server";
import { action as logoutAction } from "~/routes/logout";
import { action as localeAction } from "~/routes/resources.locale";
import { resetOidcCaches } from "~/services/web/auth.server";
import { buildConfig, parseEnv, setConfig, type Config } from "~/services/config/config.server";
import { startFakeOidcProvider, type FakeOidcProvider } from "../support/fake-oidc-provider";
import { appRequest, callback, goToProvider, newBrowser } from "../support/sign-in-browser";
import { callRoute, setupTestApp, signedInUser, TEST_CLIENT } from "../setup/app";

// ASVS 3.3.1 / 3.3.3: under an https APP_URL every cookie the app sets is a `__Host-` cookie — Secure, Path=/, no
// Domain — so no sibling subdomain or plain-http answer can plant or overwrite it. The test browser refuses a
// `__Host-` cookie that breaks those rules, as a real one does, so a sign-in only completes if every cookie holds.
// (On plain http the names stay as they were: tests/integration/sign-in.test.ts.)
const HTTPS_APP_URL = "https://skribent.example";
const app = setupTestApp();
let provider: FakeOidcProvider;
let httpsConfig: Config;

beforeAll(async () => {
  provider = await startFakeOidcProvider({ ...TEST_CLIENT, redirectUris: [`${HTTPS_APP_URL}/auth/callback`] });
  httpsConfig = buildConfig(
    parseEnv({
      APP_ENV: "test",
      APP_URL: HTTPS_APP_URL,
      DATA_DIR: app.config.dataDir,
      COOKIE_SECRET: app.config.cookieSecrets.join(","),
      STORAGE_SIGNING_SECRET: "y".repeat(40),
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: TEST_CLIENT.clientId,
      OIDC_CLIENT_SECRET: TEST_CLIENT.clientSecret,
    }),
  );
});
beforeEach(() => {
  setConfig(httpsConfig);
  resetOidcCaches();
});
afterEach(() => {
  setConfig(app.config);
  resetOidcCaches();
});
afterAll(() => provider.close());

function expectHostCookies(setCookies: string[]) {
  expect(setCookies.length).toBeGreaterThan(0);
  for (const setCookie of setCookies) {
    expect(setCookie).toMatch(/^__Host-skribent_/);
    expect(setCookie).toMatch(/; Secure(;|$)/i);
    expect(setCookie).toMatch(/; Path=\/(;|$)/);
    expect(setCookie).not.toMatch(/; Domain=/i);
  }
}

describe("cookies under an https APP_URL", () => {
  it("signs in and out with __Host- cookies only; a session under the old name needs a new sign-in", async () => {
    const browser = newBrowser();
    const { query, start } = await goToProvider(browser);
    expect(browser.cookie).toMatch(/__Host-skribent_oauth:[^=]+=/);
    expect(browser.cookie).toMatch(/__Host-skribent_return=/);
    const signedIn = browser.keep(await callback(query, browser.cookie));
    expect(signedIn.status).toBe(200);
    expect(await signedIn.json()).toMatchObject({ redirectTo: "/help" });
    // The state and return-to cookies are gone (their deletions are Secure too), the session is there.
    expect(browser.cookie).toMatch(/^__Host-skribent_sid=[^;]+$/);
    expect((await callRoute(workspaceLoader, appRequest("/", browser.cookie))).status).toBe(200);

    const unprefixed = browser.cookie.replace(/^__Host-/, "");
    const old = await callRoute(workspaceLoader, appRequest("/", unprefixed));
    expect(old.status).toBe(302);
    expect(old.headers.get("Location")).toMatch(/^\/login\?redirectTo=/);

    const logout = browser.keep(
      await callRoute(
        logoutAction,
        appRequest("/logout", browser.cookie, { method: "POST", headers: { "Sec-Fetch-Site": "same-origin" } }),
      ),
    );
    expect(logout.status).toBe(302);
    expect(browser.cookie).toBe("");
    expectHostCookies([start, signedIn, logout].flatMap((response) => response.headers.getSetCookie()));
  });

  it("keeps the language, the one-time message and the letter view in __Host- cookies and reads them back", async () => {
    const { cookie } = await signedInUser({ email: "host-cookies@praxis.example" });
    expect(cookie).toMatch(/^__Host-skribent_sid=/);
    const switched = await callRoute(
      localeAction,
      appRequest("/resources/locale", cookie, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
        body: "language=en&redirectTo=%2Fsettings",
      }),
    );
    expect(switched.status).toBe(302);
    expectHostCookies(switched.headers.getSetCookie());
    const next = [cookie, ...switched.headers.getSetCookie().map((setCookie) => setCookie.split(";")[0])].join("; ");
    const page = await callRoute(workspaceLoader, appRequest("/settings", next));
    expect(await page.json()).toMatchObject({
      language: "en",
      toast: { type: "info", key: "notice.transcriptionLanguage_en" },
    });
    expectHostCookies(page.headers.getSetCookie()); // the message, consumed

    const view = await rememberView("text");
    expectHostCookies([view]);
    expect(await readViewPreference(appRequest("/arztbriefe", view.split(";")[0]))).toBe("text");
  });
});
