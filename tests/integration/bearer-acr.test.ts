import { describe, expect, it } from "vitest";
import { getUserByIdentity } from "~/models/user.server";
import { resetOidcCaches } from "~/services/web/auth.server";
import { getConfig, setConfig } from "~/services/config/config.server";
import { DEV_ACR } from "~/services/dev-oidc/accounts";
import { claimsOf, listFilesWith as listFiles, savePromptWith as savePrompt } from "../support/api-client";
import { getDevAccessToken } from "../support/oidc-client";
import { startTokenIssuer } from "../support/token-issuer";
import { setupTestApp, TEST_CLIENT } from "../setup/app";
import { deniedAudits, promptTitles } from "../support/bearer-refusals";

// ASVS 10.3.4, OIDC_ACR_VALUES at the JSON API (ADR 0019): access tokens are verified here, against the provider's
// keys, so the `acr` a provider puts in them (RFC 9068 §2.2.1) is checked like the ID token's at sign-in — or a
// password-only sign-in would reach through the API everything the web sign-in refuses it. A refused token gets
// 401 {"detail": "Unauthorized"} with RFC 9470's step-up challenge, does nothing and leaves a denied audit row.
const app = setupTestApp({ provider: true, env: { OIDC_ACR_VALUES: DEV_ACR.multiFactor } });

/** A real access token of the development provider; `acrValues` is what the client asked for at sign-in. */
const tokenOf = async (accountId: string, acrValues?: string) =>
  (
    await getDevAccessToken({
      issuer: app.issuer,
      ...TEST_CLIENT,
      accountId,
      audience: "skribent-api",
      ...(acrValues ? { extraParams: { acr_values: acrValues } } : {}),
    })
  ).access_token;

async function expectStepUp(answer: Promise<Response>) {
  const response = await answer;
  expect(response.status).toBe(401);
  expect(await response.json()).toEqual({ detail: "Unauthorized" });
  expect(response.headers.get("WWW-Authenticate")).toBe(
    `Bearer error="insufficient_user_authentication", acr_values="${DEV_ACR.multiFactor}"`,
  );
}

describe("a bearer token when OIDC_ACR_VALUES requires the second factor", () => {
  it("is accepted when its sign-in showed the second factor", async () => {
    const token = await tokenOf("anna-berger", DEV_ACR.multiFactor);
    expect(claimsOf(token).acr).toBe(DEV_ACR.multiFactor);
    expect((await listFiles(token)).status).toBe(200);
    expect((await savePrompt(token, "Mit zweitem Faktor")).status).toBe(201);
  });

  it("is refused with a step-up challenge when its sign-in used the password alone, and does nothing", async () => {
    const token = await tokenOf("paul-neumann", DEV_ACR.multiFactor);
    expect(claimsOf(token)).toMatchObject({ sub: "paul-neumann", acr: DEV_ACR.password });
    const audits = (await deniedAudits("api.bearer.acr")).length;
    await expectStepUp(listFiles(token));
    await expectStepUp(savePrompt(token, "Nur mit Passwort"));
    expect((await deniedAudits("api.bearer.acr")).slice(audits)).toEqual([{ user_id: null }, { user_id: null }]);
    expect(await promptTitles()).not.toContain("Nur mit Passwort");
    // No account was made for the refused caller.
    expect(await getUserByIdentity({ issuer: app.issuer, subject: "paul-neumann" })).toBeUndefined();
  });

  it("is refused for a known account whose client did not ask for the second factor, naming the account", async () => {
    const strong = await tokenOf("jonas-keller", DEV_ACR.multiFactor);
    expect((await listFiles(strong)).status).toBe(200);
    const known = await getUserByIdentity({ issuer: app.issuer, subject: "jonas-keller" });
    const weak = await tokenOf("jonas-keller");
    expect(claimsOf(weak).acr).toBe(DEV_ACR.password);
    await expectStepUp(listFiles(weak));
    expect((await deniedAudits("api.bearer.acr")).at(-1)).toEqual({ user_id: known!.id });
  });

  it("is refused when it names no level at all, and accepted with the same claims plus the level", async () => {
    const issuer = await startTokenIssuer();
    const saved = getConfig();
    try {
      setConfig({ ...saved, oidc: { ...saved.oidc, issuer: issuer.url } });
      resetOidcCaches();
      const claims = { sub: "silent-about-acr", email: "silent@praxis.example" };
      await expectStepUp(listFiles(await issuer.sign(claims, saved.oidc.audience)));
      const strong = await issuer.sign({ ...claims, acr: DEV_ACR.multiFactor }, saved.oidc.audience);
      expect((await listFiles(strong)).status).toBe(200);
    } finally {
      setConfig(saved);
      resetOidcCaches();
      await issuer.close();
    }
  });

  it("is accepted at the password level once OIDC_ACR_VALUES is unset: nothing is checked", async () => {
    const token = await tokenOf("paul-neumann");
    const saved = getConfig();
    try {
      setConfig({ ...saved, oidc: { ...saved.oidc, acrValues: null } });
      expect((await listFiles(token)).status).toBe(200);
    } finally {
      setConfig(saved);
    }
    await expectStepUp(listFiles(token));
  });
});
