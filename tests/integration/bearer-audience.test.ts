import { beforeAll, describe, expect, it } from "vitest";
import { loader as promptsLoader } from "~/routes/api.prompts";
import { resetOidcCaches } from "~/services/web/auth.server";
import { getConfig, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import {
  bearerRequest as bearer,
  claimsOf,
  listFilesWith as listFiles,
  savePromptWith as savePrompt,
} from "../support/api-client";
import { getDevAccessToken } from "../support/oidc-client";
import { callRoute, setupTestApp, TEST_CLIENT } from "../setup/app";

// ASVS 10.3.1, the resource server accepts only access tokens meant for it: tokens from the configured provider
// itself — genuine, unexpired, signed with its key, for a real account — that differ only in their audience. The
// API answers 401 {"detail": "Unauthorized"}, audits the refusal, and does nothing for the caller; the same
// sign-in's access token for this API's audience passes.
const app = setupTestApp({ provider: true });

let tokens: { access_token: string; id_token: string };

beforeAll(async () => {
  tokens = await getDevAccessToken({
    issuer: app.issuer,
    ...TEST_CLIENT,
    accountId: "anna-berger",
    audience: "skribent-api",
  });
});

async function deniedBearerAudits() {
  const rows = await getDb()
    .selectFrom("audit_events")
    .where("action", "=", "api.bearer")
    .where("outcome", "=", "denied")
    .select("id")
    .execute();
  return rows.length;
}

async function expectUnauthorized(answer: Promise<Response>) {
  const response = await answer;
  expect(response.status).toBe(401);
  expect(await response.json()).toEqual({ detail: "Unauthorized" });
}

describe("a bearer token from the configured provider", () => {
  it("is accepted when issued for this API's audience", async () => {
    expect(claimsOf(tokens.access_token)).toMatchObject({ iss: app.issuer, aud: getConfig().oidc.audience });
    expect((await listFiles(tokens.access_token)).status).toBe(200);
    expect((await savePrompt(tokens.access_token, "Mit Zugriffstoken")).status).toBe(201);
  });

  it("is refused when issued for another audience: the sign-in's ID token, meant for the client", async () => {
    // Genuine in every other way: the same provider, key, account and lifetime; only `aud` names the web client.
    const claims = claimsOf(tokens.id_token);
    expect(claims).toMatchObject({ iss: app.issuer, aud: TEST_CLIENT.clientId, sub: "anna-berger" });
    expect(claims.exp * 1000).toBeGreaterThan(Date.now());
    const audits = await deniedBearerAudits();
    await expectUnauthorized(listFiles(tokens.id_token));
    await expectUnauthorized(savePrompt(tokens.id_token, "Mit ID-Token"));
    expect(await deniedBearerAudits()).toBe(audits + 2);
    // Nothing was saved for the account: only the prompt of the accepted token is there.
    const listed = await (await callRoute(promptsLoader, bearer(tokens.access_token, "/api/prompts"))).json();
    expect(listed.prompts.map((p: { title: string }) => p.title)).toEqual(["Mit Zugriffstoken"]);
  });

  it("is refused by a deployment whose audience is another one, and accepted again by this one", async () => {
    // A second Skribent (say, staging) trusting the same provider: this API's token is not meant for it.
    const saved = getConfig();
    try {
      setConfig({ ...saved, oidc: { ...saved.oidc, audience: "skribent-api-staging" } });
      resetOidcCaches();
      await expectUnauthorized(listFiles(tokens.access_token));
      await expectUnauthorized(savePrompt(tokens.access_token, "Auf Staging"));
    } finally {
      setConfig(saved);
      resetOidcCaches();
    }
    expect((await listFiles(tokens.access_token)).status).toBe(200);
  });
});
