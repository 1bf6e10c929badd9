import { describe, expect, test } from "vitest";

import {
  authorizeAtDevProvider,
  createCookieJar,
  getDevAccessToken,
  parsePostForm,
} from "../../../tests/support/oidc-client";
import { demoAccounts } from "./accounts";
import { escapeHtml } from "./pages.server";
import { audience, authorizationUrl, client, testProviderForFile } from "../../../tests/support/dev-oidc-helpers";
import { UNVERIFIED_EMAIL_DESCRIPTION } from "./provider.server";

// Discovery, tokens and the provider's lifecycle: provider-tokens.server.test.ts.
const world = testProviderForFile();
const { clientArgs } = world;

describe("sign-in page", () => {
  test("lists every demo account as a plain form without scripts", async () => {
    const jar = createCookieJar();
    const redirect = await jar.fetch(authorizationUrl(world.provider, { scope: "openid profile email" }));
    expect(redirect.status).toBe(303);
    const pageUrl = new URL(redirect.headers.get("location")!, world.provider.issuer);
    expect(pageUrl.pathname).toMatch(/^\/interaction\/[\w-]+$/);
    expect(jar.cookieHeader(pageUrl)).toContain("devoidc_interaction=");

    const page = await jar.fetch(pageUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('<html lang="de"');
    expect(html).toContain("Bei Skribent anmelden");
    for (const account of demoAccounts) {
      expect(html).toContain(escapeHtml(account.name));
      expect(html).toContain(escapeHtml(account.email));
      expect(html).toContain(`name="accountId" value="${escapeHtml(account.id)}"`);
    }
    const form = parsePostForm(html, pageUrl);
    expect(form.action.href).toBe(`${pageUrl.href}/login`);
    expect(html).toMatch(/<form method="post"/);
  });

  test("speaks English when ui_locales asks for it", async () => {
    const jar = createCookieJar();
    const redirect = await jar.fetch(authorizationUrl(world.provider, { ui_locales: "en-GB de" }));
    const html = await (await jar.fetch(new URL(redirect.headers.get("location")!, world.provider.issuer))).text();
    expect(html).toContain('<html lang="en"');
    expect(html).toContain("Sign in to Skribent");
  });

  test("an interaction page opened without its cookie shows an error page, not a crash", async () => {
    const response = await fetch(`${world.provider.issuer}/interaction/doesnotexist`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("invalid_request");
  });

  test("the unverified account ends the flow with Auth0's access_denied wording", async () => {
    const { callback, state } = await authorizeAtDevProvider({
      ...clientArgs("lena-vogel"),
      audience,
    });
    expect(callback.origin + callback.pathname).toBe(client.redirect_uris[0]);
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expect(callback.searchParams.get("error_description")).toBe(UNVERIFIED_EMAIL_DESCRIPTION);
    expect(UNVERIFIED_EMAIL_DESCRIPTION).toBe("Please verify your email before logging in.");
    expect(callback.searchParams.get("state")).toBe(state);
    expect(callback.searchParams.has("code")).toBe(false);
  });
});

describe("RP-initiated logout", () => {
  test("shows a script-free confirmation form and redirects to the post-logout URI", async () => {
    const jar = createCookieJar();
    const tokens = await getDevAccessToken({ ...clientArgs("ops-admin"), audience, jar });

    const endSession = new URL(`${world.provider.issuer}/session/end`);
    endSession.search = new URLSearchParams({
      id_token_hint: tokens.id_token,
      post_logout_redirect_uri: client.post_logout_redirect_uris[0]!,
      state: "bye",
    }).toString();
    const page = await jar.fetch(endSession);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain("Abmelden");
    expect(html).toMatch(/<input type="hidden" name="xsrf" value="[^"]+"/);

    const form = parsePostForm(html, endSession);
    form.fields.set("logout", "yes");
    const confirmed = await jar.fetch(form.action, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: form.fields.toString(),
    });
    expect(confirmed.status).toBe(303);
    const location = new URL(confirmed.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(client.post_logout_redirect_uris[0]);
    expect(location.searchParams.get("state")).toBe("bye");
    // The provider session is gone: its cookie was cleared.
    expect(jar.cookieHeader(world.provider.issuer)).not.toContain("devoidc_session=");
  });

  test("the logout page is English for an English browser", async () => {
    const jar = createCookieJar();
    const tokens = await getDevAccessToken({ ...clientArgs("emily-clarke"), audience, jar });
    const endSession = new URL(`${world.provider.issuer}/session/end`);
    endSession.searchParams.set("id_token_hint", tokens.id_token);
    const html = await (await jar.fetch(endSession, { headers: { "Accept-Language": "en-GB,en;q=0.9" } })).text();
    expect(html).toContain("Sign out");
    expect(html).not.toContain("Abmelden");
  });
});
