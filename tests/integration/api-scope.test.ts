import { describe, expect, it } from "vitest";
import { getUserByIdentity } from "~/models/user.server";
import { loader as filesLoader } from "~/routes/api.files";
import { resetOidcCaches } from "~/services/web/auth.server";
import { getConfig, setConfig } from "~/services/config/config.server";
import { DEV_ACR } from "~/services/dev-oidc/accounts";
import { claimsOf, listFilesWith as listFiles, savePromptWith as savePrompt } from "../support/api-client";
import { getDevAccessToken } from "../support/oidc-client";
import { startTokenIssuer } from "../support/token-issuer";
import { callRoute, request, setupTestApp, signedInUser, TEST_CLIENT } from "../setup/app";
import { deniedAudits, promptTitles } from "../support/bearer-refusals";

// ASVS 10.3.2, OIDC_API_SCOPE at the JSON API (ADR 0021): a genuine access token for this API's audience opens it
// only when the provider granted its client the API's scope — in `scope` (RFC 9068) or in `scp`, as a list or a
// string — compared whole. Otherwise 403 {"detail": "Forbidden"} with RFC 6750's insufficient_scope challenge naming
// the scope to ask for; nothing is done, no account is made, a denied audit row is left.
const SCOPE = "skribent.api";
const app = setupTestApp({ provider: true, env: { OIDC_API_SCOPE: SCOPE } });

/** A real access token of the development provider, whose client asked for `scope` at sign-in. */
const tokenOf = async (accountId: string, scope = "openid profile email") =>
  (await getDevAccessToken({ issuer: app.issuer, ...TEST_CLIENT, accountId, audience: "skribent-api", scope }))
    .access_token;

async function expectInsufficientScope(answer: Promise<Response>) {
  const response = await answer;
  expect(response.status).toBe(403);
  expect(await response.json()).toEqual({ detail: "Forbidden" });
  expect(response.headers.get("WWW-Authenticate")).toBe(`Bearer error="insufficient_scope", scope="${SCOPE}"`);
}

/** Runs `run` with a provider that signs whatever claims a test gives, configured in place of the real one. */
async function withTokenIssuer(
  run: (sign: (claims: { sub: string } & Record<string, unknown>) => Promise<string>) => Promise<void>,
) {
  const issuer = await startTokenIssuer();
  const saved = getConfig();
  try {
    setConfig({ ...saved, oidc: { ...saved.oidc, issuer: issuer.url } });
    resetOidcCaches();
    await run((claims) => issuer.sign(claims, saved.oidc.audience));
  } finally {
    setConfig(saved);
    resetOidcCaches();
    await issuer.close();
  }
}

describe("a bearer token when OIDC_API_SCOPE names the API's scope", () => {
  it("is accepted when its client asked for the scope and the provider granted it in `scope`", async () => {
    const token = await tokenOf("anna-berger", `openid profile email ${SCOPE}`);
    expect(claimsOf(token)).toMatchObject({ sub: "anna-berger", scope: `openid profile email ${SCOPE}` });
    expect((await listFiles(token)).status).toBe(200);
    expect((await savePrompt(token, "Mit API-Scope")).status).toBe(201);
  });

  it("is accepted with the scope in scp, an array (Okta) or a string (Entra ID)", async () => {
    await withTokenIssuer(async (sign) => {
      const array = await sign({ sub: "scp-array", scp: ["openid", SCOPE] });
      expect((await listFiles(array)).status).toBe(200);
      const string = await sign({ sub: "scp-string", scp: `User.Read ${SCOPE}` });
      expect((await listFiles(string)).status).toBe(200);
    });
  });

  it("is refused with insufficient_scope when its client did not ask for the scope, and does nothing", async () => {
    const token = await tokenOf("paul-neumann");
    expect(claimsOf(token)).toMatchObject({ sub: "paul-neumann", scope: "openid profile email" });
    const audits = (await deniedAudits("api.bearer.scope")).length;
    await expectInsufficientScope(listFiles(token));
    await expectInsufficientScope(savePrompt(token, "Ohne API-Scope"));
    expect((await deniedAudits("api.bearer.scope")).slice(audits)).toEqual([{ user_id: null }, { user_id: null }]);
    expect(await promptTitles()).not.toContain("Ohne API-Scope");
    // No account was made for the refused caller.
    expect(await getUserByIdentity({ issuer: app.issuer, subject: "paul-neumann" })).toBeUndefined();
  });

  it("is refused for a known account whose client did not ask for the scope, naming the account", async () => {
    expect((await listFiles(await tokenOf("jonas-keller", `openid ${SCOPE}`))).status).toBe(200);
    const known = await getUserByIdentity({ issuer: app.issuer, subject: "jonas-keller" });
    await expectInsufficientScope(listFiles(await tokenOf("jonas-keller")));
    expect((await deniedAudits("api.bearer.scope")).at(-1)).toEqual({ user_id: known!.id });
  });

  it("is refused when granted another scope, or one that only contains it", async () => {
    await withTokenIssuer(async (sign) => {
      const audits = (await deniedAudits("api.bearer.scope")).length;
      const granted = [
        { scope: "openid profile email skribent.read" },
        { scope: `${SCOPE}.read` },
        { scope: `x${SCOPE}` },
        { scope: SCOPE.toUpperCase() },
        { scope: `${SCOPE},skribent.read` },
        { scp: [`${SCOPE}.read`, `x${SCOPE}`] },
        { scp: [`${SCOPE} openid`] },
        { scp: `${SCOPE}.read x${SCOPE}` },
      ];
      for (const [index, claims] of granted.entries()) {
        await expectInsufficientScope(listFiles(await sign({ sub: `other-scope-${index}`, ...claims })));
      }
      expect((await deniedAudits("api.bearer.scope")).length).toBe(audits + granted.length);
    });
  });

  it("is refused when it names no scope at all, and accepted with the same claims plus the scope", async () => {
    await withTokenIssuer(async (sign) => {
      const claims = { sub: "silent-about-scope", email: "silent@praxis.example" };
      await expectInsufficientScope(listFiles(await sign(claims)));
      await expectInsufficientScope(listFiles(await sign({ ...claims, scope: 42, scp: { [SCOPE]: true } })));
      expect((await listFiles(await sign({ ...claims, scope: SCOPE }))).status).toBe(200);
    });
  });

  it("is asked to sign in more strongly first when it lacks both the scope and the strength OIDC_ACR_VALUES asks", async () => {
    await withTokenIssuer(async (sign) => {
      const saved = getConfig();
      setConfig({ ...saved, oidc: { ...saved.oidc, acrValues: [DEV_ACR.multiFactor] } });
      const weak = await listFiles(await sign({ sub: "weak-unscoped", acr: DEV_ACR.password }));
      expect(weak.status).toBe(401);
      expect(weak.headers.get("WWW-Authenticate")).toMatch(/^Bearer error="insufficient_user_authentication"/);
      await expectInsufficientScope(listFiles(await sign({ sub: "weak-unscoped", acr: DEV_ACR.multiFactor })));
    });
  });

  it("is accepted without the scope once OIDC_API_SCOPE is unset: nothing is checked", async () => {
    const token = await tokenOf("emily-clarke");
    const saved = getConfig();
    try {
      setConfig({ ...saved, oidc: { ...saved.oidc, apiScope: null } });
      expect((await listFiles(token)).status).toBe(200);
    } finally {
      setConfig(saved);
    }
    await expectInsufficientScope(listFiles(token));
  });
});

describe("a session-cookie caller when OIDC_API_SCOPE is set", () => {
  it("is not asked for a scope: scopes are what a token was granted, a session is the user's own", async () => {
    const { cookie } = await signedInUser({ email: "lea.sommer@praxis.example" });
    expect((await callRoute(filesLoader, request("/api/files", { cookie }))).status).toBe(200);
  });
});
