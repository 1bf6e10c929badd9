import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { getUserByIdentity, upsertUserByIdentity } from "~/models/user.server";
import { resetOidcCaches } from "~/services/web/auth.server";
import { getConfig, setConfig, type Config } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { DEV_ACR } from "~/services/dev-oidc/accounts";
import { languageCookie } from "~/services/web/i18n.server";
import { startFakeOidcProvider, type FakeOidcProvider } from "../support/fake-oidc-provider";
import { signInAtDevProvider } from "../support/oidc-client";
import { serve } from "../support/remix-document";
import { callback, goToProvider, newBrowser } from "../support/sign-in-browser";
import { request, setupTestApp, TEST_CLIENT } from "../setup/app";

// OIDC_ACR_VALUES (ASVS 6.3.3, 6.8.4; ADR 0019): a hospital that requires its provider's multi-factor level gets it
// asked for at /auth/start and checked at /auth/callback. A sign-in at another level, or one whose ID token does not
// say, ends on the sign-in page with a message of its own — no account, no session, one `auth.signin.acr` audit row.
// Every page goes through the whole app (tests/support/remix-document.ts), the provider is the development one
// (which steps up to its second factor only when asked) or, for a token that names no level, a loopback fake.
const OTHER_ACCEPTED = "urn:example:phr";
const app = setupTestApp({
  provider: true,
  env: { OIDC_ACR_VALUES: ` ${DEV_ACR.multiFactor} , ${OTHER_ACCEPTED}`, RATE_LIMIT_SIGNIN_PER_MINUTE: "1000" },
});

const MESSAGE = {
  de:
    "Die Anmeldung reicht nicht aus: Ihre Einrichtung verlangt für Skribent eine stärkere Anmeldung, zum Beispiel " +
    "mit einem zweiten Faktor. Bitte melden Sie sich erneut an; wird Ihnen kein zweiter Faktor angeboten, wenden " +
    "Sie sich an Ihre IT.",
  en:
    "This sign-in is not strong enough: your organisation requires a stronger sign-in for Skribent, for example " +
    "with a second factor. Please sign in again; if you are not offered a second factor, contact your IT department.",
};

let warn: MockInstance<typeof console.warn>;
beforeEach(() => {
  // The callback logs why it refused; the tests read that to be sure the acr check refused, not another.
  warn = vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => warn.mockRestore());

const cookiesOf = (response: Response) => response.headers.getSetCookie().map((c) => c.split(";")[0]);

/** /auth/start, the development provider as `accountId`, /auth/callback: what the browser gets back at the end. */
async function signInThroughApp(accountId: string) {
  const start = await serve(request("/auth/start?redirectTo=%2Fhelp"));
  expect(start.status).toBe(302);
  const { code, state } = await signInAtDevProvider({
    issuer: app.issuer,
    ...TEST_CLIENT,
    accountId,
    authorizationUrl: start.headers.get("Location")!,
  });
  return serve(request(`/auth/callback?code=${code}&state=${state}`, { cookie: cookiesOf(start).join("; ") }));
}

/** The message the sign-in page shows for `path`, in the user's language. */
async function loginMessage(path: string, language: "de" | "en") {
  const cookie = language === "en" ? (await languageCookie().serialize("en")).split(";")[0] : undefined;
  const page = await serve(request(path, { cookie }));
  expect(page.status).toBe(200);
  return /<p role="alert" data-login-reason="strength">([^<]*)<\/p>/.exec(await page.text())?.[1];
}

async function counts() {
  const count = async (table: "sessions" | "users") =>
    Number(
      (
        await getDb()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { sessions: await count("sessions"), users: await count("users") };
}

async function auditRows(action: string) {
  return getDb()
    .selectFrom("audit_events")
    .where("action", "=", action)
    .select(["user_id", "outcome"])
    .orderBy("id")
    .execute();
}

/** Refused: back to the sign-in page without a session cookie or a new row, and the page says why in both languages. */
async function expectRefused(response: Response, before: { sessions: number; users: number }) {
  expect(response.status).toBe(302);
  expect(response.headers.get("Location")).toBe("/login?strength=1");
  expect(response.headers.getSetCookie().some((c) => c.startsWith("skribent_sid="))).toBe(false);
  expect(await counts()).toEqual(before);
  expect(warn).toHaveBeenCalledWith("[auth] sign-in refused:", expect.stringMatching(/acr/));
  expect(await loginMessage("/login?strength=1", "de")).toBe(MESSAGE.de);
  expect(await loginMessage("/login?strength=1", "en")).toBe(MESSAGE.en);
}

describe("a deployment that requires the provider's second factor", () => {
  it("asks for the accepted levels at /auth/start, space-separated in the configured order", async () => {
    const start = await serve(request("/auth/start"));
    const authorize = new URL(start.headers.get("Location")!);
    expect(authorize.searchParams.get("acr_values")).toBe(`${DEV_ACR.multiFactor} ${OTHER_ACCEPTED}`);
    // Without the setting nothing is asked for.
    const saved = getConfig();
    try {
      setConfig({ ...saved, oidc: { ...saved.oidc, acrValues: null } });
      const plain = new URL((await serve(request("/auth/start"))).headers.get("Location")!);
      expect(plain.searchParams.has("acr_values")).toBe(false);
    } finally {
      setConfig(saved);
    }
  });

  it("signs in a clinician whose provider confirmed the second factor", async () => {
    const successes = (await auditRows("auth.signin")).length;
    const callbackPage = await signInThroughApp("anna-berger");
    expect(callbackPage.status).toBe(200);
    const sid = cookiesOf(callbackPage).find((c) => c.startsWith("skribent_sid="));
    expect(sid).toBeDefined();
    const workspace = await serve(request("/help", { cookie: sid }));
    expect(workspace.status).toBe(200);
    const rows = await auditRows("auth.signin");
    expect(rows.slice(successes).map((r) => r.outcome)).toEqual(["success"]);
    expect(await auditRows("auth.signin.acr")).toEqual([]);
  });

  it("refuses a sign-in with the password alone: no account, no session, a denied audit row, a clear message", async () => {
    const before = await counts();
    const denied = (await auditRows("auth.signin.acr")).length;
    await expectRefused(await signInThroughApp("paul-neumann"), before);
    expect(await getUserByIdentity({ issuer: app.issuer, subject: "paul-neumann" })).toBeUndefined();
    expect((await auditRows("auth.signin.acr")).slice(denied)).toEqual([{ user_id: null, outcome: "denied" }]);
    // The message names no level: neither the one required nor the one the provider reached.
    for (const text of Object.values(MESSAGE)) expect(text).not.toMatch(/urn:|password|mfa|acr/i);
  });

  it("names an account that already exists in the audit row, and still opens no session for it", async () => {
    const existing = await upsertUserByIdentity({
      issuer: app.issuer,
      subject: "paul-neumann",
      email: "paul.neumann@mvz-west.example",
      emailVerified: true,
      name: "Dr. med. Paul Neumann",
      locale: "de",
    });
    const before = await counts();
    await expectRefused(await signInThroughApp("paul-neumann"), before);
    expect((await auditRows("auth.signin.acr")).at(-1)).toEqual({ user_id: existing.id, outcome: "denied" });
    const sessions = await getDb()
      .selectFrom("sessions")
      .where("user_id", "=", existing.id)
      .select("id_hash")
      .execute();
    expect(sessions).toEqual([]);
  });

  it("ends on the same message when the provider itself says it could not reach the level", async () => {
    const before = await counts();
    const denied = (await auditRows("auth.signin.acr")).length;
    warn.mockClear();
    const answer = await serve(request("/auth/callback?error=unmet_authentication_requirements&state=x"));
    expect(answer.status).toBe(302);
    expect(answer.headers.get("Location")).toBe("/login?strength=1");
    expect(await counts()).toEqual(before);
    expect((await auditRows("auth.signin.acr")).slice(denied)).toEqual([{ user_id: null, outcome: "denied" }]);
    expect(await loginMessage("/login?strength=1", "en")).toBe(MESSAGE.en);
  });
});

describe("an ID token from a provider that does not say how the user signed in", () => {
  let provider: FakeOidcProvider;
  let devConfig: Config;

  beforeAll(async () => {
    provider = await startFakeOidcProvider({ ...TEST_CLIENT, redirectUris: [TEST_CLIENT.redirectUri] });
    devConfig = getConfig();
    setConfig({ ...devConfig, oidc: { ...devConfig.oidc, issuer: provider.issuer } });
    resetOidcCaches();
  });
  afterAll(async () => {
    setConfig(devConfig);
    resetOidcCaches();
    await provider.close();
  });
  beforeEach(() => provider.reset());

  async function signInAtFake() {
    const browser = newBrowser();
    const { query } = await goToProvider(browser);
    return callback(query, browser.cookie);
  }

  it("is refused when it has no acr, or one not in the list; one in the list signs in", async () => {
    let before = await counts();
    await expectRefused(await signInAtFake(), before);
    expect(warn).toHaveBeenCalledWith("[auth] sign-in refused:", expect.stringMatching(/no acr claim/));

    provider.settings.acr = "urn:example:password";
    before = await counts();
    await expectRefused(await signInAtFake(), before);

    provider.settings.acr = OTHER_ACCEPTED;
    before = await counts();
    const accepted = await signInAtFake();
    expect(accepted.status).toBe(200);
    expect(await counts()).toEqual({ sessions: before.sessions + 1, users: before.users + 1 });
    expect(provider.tokenRequests.map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it("signs in as before when OIDC_ACR_VALUES is unset: nothing is checked", async () => {
    const saved = getConfig();
    try {
      setConfig({ ...saved, oidc: { ...saved.oidc, acrValues: null } });
      provider.settings.account = { sub: "fake-no-acr", email: "no.acr@praxis.example", name: "Dr. Ohne Stufe" };
      const before = await counts();
      expect((await signInAtFake()).status).toBe(200);
      expect((await counts()).sessions).toBe(before.sessions + 1);
    } finally {
      setConfig(saved);
    }
  });
});
