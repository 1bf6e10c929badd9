import net from "node:net";

import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

import {
  authorizeAtDevProvider,
  createCookieJar,
  exchangeCodeAtDevProvider,
  fetchDiscovery,
  getDevAccessToken,
  parsePostForm,
  signInAtDevProvider,
} from "../../../tests/support/oidc-client";
import { demoAccounts } from "./accounts";
import { escapeHtml } from "./pages.server";
import { startDevOidcProvider, UNVERIFIED_EMAIL_DESCRIPTION, type DevOidcProvider } from "./provider.server";

const client = {
  client_id: "skribent-test",
  client_secret: "test-secret-that-is-long-enough-0123456789",
  redirect_uris: ["http://app.test/auth/callback"],
  post_logout_redirect_uris: ["http://app.test/signed-out"],
};
const audience = "skribent-api";

let provider: DevOidcProvider;

function clientArgs(accountId: string) {
  return {
    issuer: provider.issuer,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    redirectUri: client.redirect_uris[0]!,
    accountId,
  };
}

beforeAll(async () => {
  provider = await startDevOidcProvider({
    issuer: "http://ignored.invalid",
    port: 0,
    clients: [client],
    audience,
  });
});

afterAll(async () => {
  await provider?.close();
});

describe("discovery and keys", () => {
  test("publishes the endpoints, S256 PKCE and an RS256 signing key", async () => {
    const discovery = await fetchDiscovery(provider.issuer);
    expect(discovery.issuer).toBe(provider.issuer);
    expect(discovery.authorization_endpoint).toBe(`${provider.issuer}/auth`);
    expect(discovery.token_endpoint).toBe(`${provider.issuer}/token`);
    expect(discovery.jwks_uri).toBe(`${provider.issuer}/jwks`);
    expect(discovery.end_session_endpoint).toBe(`${provider.issuer}/session/end`);
    expect(discovery.code_challenge_methods_supported).toContain("S256");
    expect(discovery.response_types_supported).toEqual(["code"]);
    expect(discovery.scopes_supported).toEqual(expect.arrayContaining(["openid", "profile", "email"]));
    expect(discovery.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(["client_secret_basic", "client_secret_post"]),
    );

    const jwks = (await (await fetch(discovery.jwks_uri)).json()) as {
      keys: Array<Record<string, unknown>>;
    };
    const key = jwks.keys.find((k) => k.alg === "RS256");
    expect(key).toMatchObject({ kty: "RSA", use: "sig" });
    expect(typeof key?.kid).toBe("string");
    // A public key set never carries the private exponent.
    expect(key).not.toHaveProperty("d");
  });
});

describe("authorization code flow with PKCE", () => {
  test("issues a verifiable ID token and a JWT access token for the API audience", async () => {
    const tokens = await getDevAccessToken({ ...clientArgs("anna-berger"), audience });
    const jwks = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));

    const id = await jwtVerify(tokens.id_token, jwks, {
      issuer: provider.issuer,
      audience: client.client_id,
      algorithms: ["RS256"],
    });
    expect(id.payload).toMatchObject({
      sub: "anna-berger",
      email: "anna.berger@praxis-berger.example",
      email_verified: true,
      name: "Dr. med. Anna Berger",
      given_name: "Anna",
      family_name: "Berger",
      locale: "de",
    });

    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({
      alg: "RS256",
      typ: "at+jwt",
    });
    const access = await jwtVerify(tokens.access_token, jwks, {
      issuer: provider.issuer,
      audience,
      algorithms: ["RS256"],
    });
    expect(access.payload).toMatchObject({
      sub: "anna-berger",
      aud: audience,
      email: "anna.berger@praxis-berger.example",
      scope: "openid profile email",
    });
    expect(access.payload.exp! - access.payload.iat!).toBe(3600);
    expect(tokens.expires_in).toBeGreaterThan(3500);
  });

  test("accepts resource=<audience> as well as audience=<audience>, and client_secret_post", async () => {
    const { callback, codeVerifier } = await authorizeAtDevProvider({
      ...clientArgs("emily-clarke"),
      extraParams: { resource: audience },
    });
    const code = callback.searchParams.get("code");
    expect(code).toBeTruthy();
    const { status, body } = await exchangeCodeAtDevProvider({
      ...clientArgs("emily-clarke"),
      code: code!,
      codeVerifier,
      clientAuth: "client_secret_post",
    });
    expect(status).toBe(200);
    const jwks = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
    const access = await jwtVerify(String(body.access_token), jwks, {
      issuer: provider.issuer,
      audience,
    });
    expect(access.payload.sub).toBe("emily-clarke");
  });

  test("refuses an unknown audience with invalid_target", async () => {
    const { callback } = await authorizeAtDevProvider({
      ...clientArgs("anna-berger"),
      audience: "some-other-api",
    });
    expect(callback.searchParams.get("error")).toBe("invalid_target");
  });

  test("rejects a token request with the wrong code_verifier", async () => {
    const { code } = await signInAtDevProvider({ ...clientArgs("jonas-keller"), audience });
    const { status, body } = await exchangeCodeAtDevProvider({
      ...clientArgs("jonas-keller"),
      code,
      codeVerifier: "x".repeat(43),
    });
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_grant");
  });

  test("refuses an authorization request without PKCE", async () => {
    const url = new URL(`${provider.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0]!,
      response_type: "code",
      scope: "openid",
      state: "s",
    }).toString();
    const response = await fetch(url, { redirect: "manual" });
    const location = new URL(response.headers.get("location") ?? "", provider.issuer);
    expect(location.origin + location.pathname).toBe(client.redirect_uris[0]);
    expect(location.searchParams.get("error")).toBe("invalid_request");
  });
});

describe("sign-in page", () => {
  test("lists every demo account as a plain form without scripts", async () => {
    const jar = createCookieJar();
    const url = new URL(`${provider.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0]!,
      response_type: "code",
      scope: "openid profile email",
      state: "s",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    }).toString();
    const redirect = await jar.fetch(url);
    expect(redirect.status).toBe(303);
    const pageUrl = new URL(redirect.headers.get("location")!, provider.issuer);
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
    const url = new URL(`${provider.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0]!,
      response_type: "code",
      scope: "openid",
      state: "s",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      ui_locales: "en-GB de",
    }).toString();
    const redirect = await jar.fetch(url);
    const html = await (await jar.fetch(new URL(redirect.headers.get("location")!, provider.issuer))).text();
    expect(html).toContain('<html lang="en"');
    expect(html).toContain("Sign in to Skribent");
  });

  test("an interaction page opened without its cookie shows an error page, not a crash", async () => {
    const response = await fetch(`${provider.issuer}/interaction/doesnotexist`);
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

    const endSession = new URL(`${provider.issuer}/session/end`);
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
    expect(jar.cookieHeader(provider.issuer)).not.toContain("devoidc_session=");
  });

  test("the logout page is English for an English browser", async () => {
    const jar = createCookieJar();
    const tokens = await getDevAccessToken({ ...clientArgs("emily-clarke"), audience, jar });
    const endSession = new URL(`${provider.issuer}/session/end`);
    endSession.searchParams.set("id_token_hint", tokens.id_token);
    const html = await (await jar.fetch(endSession, { headers: { "Accept-Language": "en-GB,en;q=0.9" } })).text();
    expect(html).toContain("Sign out");
    expect(html).not.toContain("Abmelden");
  });
});

describe("lifecycle", () => {
  test("port 0 reports the real port and close() frees it", async () => {
    const second = await startDevOidcProvider({
      issuer: "http://ignored.invalid",
      port: 0,
      clients: [client],
      audience,
    });
    expect(second.port).toBeGreaterThan(0);
    expect(second.issuer).toBe(`http://127.0.0.1:${second.port}`);
    const discovery = await fetchDiscovery(second.issuer);
    expect(discovery.issuer).toBe(second.issuer);

    await second.close();
    await second.close();

    // The port can be bound again once the provider is closed.
    await new Promise<void>((resolve, reject) => {
      const probe = net.createServer();
      probe.once("error", reject);
      probe.listen(second.port, "127.0.0.1", () => probe.close(() => resolve()));
    });
  });

  test("a fixed port uses the given issuer", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer();
      probe.listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const fixed = await startDevOidcProvider({
      issuer: `http://localhost:${port}/`,
      port,
      clients: [client],
      audience,
    });
    try {
      expect(fixed.port).toBe(port);
      expect(fixed.issuer).toBe(`http://localhost:${port}`);
      const discovery = await fetchDiscovery(`http://127.0.0.1:${port}`);
      expect(discovery.issuer).toBe(`http://localhost:${port}`);
    } finally {
      await fixed.close();
    }
  });
});
