import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { loader as workspaceLoader } from "~/routes/_app";
import { nonceFor, resetOidcCaches } from "~/services/web/auth.server";
import { getConfig, setConfig, type Config } from "~/services/config/config.server";
import type { SecretList } from "~/services/config/secrets.server";
import { getDb } from "~/models/db.server";
import { saveRealtimeTranscript } from "~/services/live/save.server";
import { readToast, setToast } from "~/services/web/toast.server";
import { startFakeOidcProvider, type FakeOidcProvider } from "../support/fake-oidc-provider";
import { livePayload } from "../support/live-save";
import { appRequest, callback, goToProvider, newBrowser } from "../support/sign-in-browser";
import { callRoute, setupTestApp, signedInUser, TEST_CLIENT } from "../setup/app";

// COOKIE_SECRET is a rotation list (ASVS 11.2.2, config/secrets.server.ts): the first secret signs, every one is
// accepted. Putting a new secret first keeps everything signed with the old one working until it is removed from
// the list. Covered: the session and one-time-message cookies (Remix's `secrets`), the OIDC nonce and the live-save
// fingerprint. The local store's signed URLs: storage-local.server.test.ts.

setupTestApp({ env: { RATE_LIMIT_SIGNIN_PER_MINUTE: "1000" } });
const OLD = "x".repeat(40); // tests/setup/app.ts's COOKIE_SECRET
const NEW = "a-new-cookie-secret-put-first-at-rotation";
let provider: FakeOidcProvider;
let base: Config;

function useSecrets(cookieSecrets: SecretList) {
  setConfig({ ...base, cookieSecrets });
}

beforeAll(async () => {
  provider = await startFakeOidcProvider({ ...TEST_CLIENT, redirectUris: [TEST_CLIENT.redirectUri] });
  base = { ...getConfig(), oidc: { ...getConfig().oidc, issuer: provider.issuer } };
  expect(base.cookieSecrets).toEqual([OLD]);
  setConfig(base);
  resetOidcCaches();
});
afterEach(() => setConfig(base));
afterAll(async () => {
  resetOidcCaches();
  await provider.close();
});

const workspaceStatus = async (cookie: string) => (await callRoute(workspaceLoader, appRequest("/", cookie))).status;

describe("cookies across a COOKIE_SECRET rotation", () => {
  it("accepts a session cookie signed with the old secret after a new one is put first, refuses it once removed", async () => {
    const { cookie } = await signedInUser({ email: "rotation-old@praxis.example" });
    expect(await workspaceStatus(cookie)).toBe(200);
    useSecrets([NEW, OLD]);
    expect(await workspaceStatus(cookie)).toBe(200);
    useSecrets([NEW]);
    expect(await workspaceStatus(cookie)).toBe(302); // to the sign-in page: the signature no longer holds
  });

  it("signs new session cookies with the first secret of the list", async () => {
    useSecrets([NEW, OLD]);
    const { cookie } = await signedInUser({ email: "rotation-new@praxis.example" });
    useSecrets([NEW]);
    expect(await workspaceStatus(cookie)).toBe(200);
    useSecrets([OLD]);
    expect(await workspaceStatus(cookie)).toBe(302);
  });

  it("reads a one-time message signed with the old secret, signs new ones with the first", async () => {
    const toast = { type: "success", key: "toast.signedIn" } as const;
    const asCookie = (setCookie: string) => setCookie.split(";")[0]!;
    const fromOld = asCookie(await setToast(toast));
    useSecrets([NEW, OLD]);
    expect((await readToast(appRequest("/", fromOld))).toast).toEqual(toast);
    const fromNew = asCookie(await setToast(toast));
    useSecrets([NEW]);
    expect((await readToast(appRequest("/", fromOld))).toast).toBeNull();
    expect((await readToast(appRequest("/", fromNew))).toast).toEqual(toast);
    useSecrets([OLD]);
    expect((await readToast(appRequest("/", fromNew))).toast).toBeNull();
  });
});

describe("the OIDC nonce across a COOKIE_SECRET rotation", () => {
  let warn: MockInstance<typeof console.warn>;
  beforeEach(() => {
    provider.reset();
    warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  });
  afterEach(() => warn.mockRestore());

  it("completes a sign-in started before the rotation; refuses it once the old secret is removed", async () => {
    const before = newBrowser();
    const started = await goToProvider(before);
    useSecrets([NEW, OLD]);
    expect((await callback(started.query, before.cookie)).status).toBe(200);

    useSecrets([OLD]);
    const retired = newBrowser();
    const startedOld = await goToProvider(retired);
    useSecrets([NEW]);
    const refused = await callback(startedOld.query, retired.cookie);
    expect(refused.status).toBe(302);
    expect(refused.headers.get("Location")).toBe("/login?failed=1");
    expect(warn).toHaveBeenCalledWith("[auth] sign-in failed:", expect.stringMatching(/nonce/));
  });

  it("binds new sign-ins to the first secret", async () => {
    useSecrets([NEW, OLD]);
    const { start } = await goToProvider(newBrowser());
    const state = new URL(start.headers.get("Location")!).searchParams;
    expect(state.get("nonce")).toBe(nonceFor(state.get("state")!, NEW));
    expect(state.get("nonce")).not.toBe(nonceFor(state.get("state")!, OLD));
  });
});

describe("the live-save fingerprint across a COOKIE_SECRET rotation", () => {
  it("a retry after a new secret was put first finds the save made before it", async () => {
    const { user } = await signedInUser({ email: "rotation-live@praxis.example" });
    const first = await saveRealtimeTranscript({ userId: user.id, payload: livePayload() });
    useSecrets([NEW, OLD]);
    expect(await saveRealtimeTranscript({ userId: user.id, payload: livePayload() })).toEqual(first);
    const rows = await getDb().selectFrom("recordings").where("owner_id", "=", user.id).select("id").execute();
    expect(rows).toHaveLength(1);
  });
});
