import net from "node:net";

import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, test } from "vitest";

import {
  authorizeAtDevProvider,
  exchangeCodeAtDevProvider,
  fetchDiscovery,
  getDevAccessToken,
  signInAtDevProvider,
} from "../../../tests/support/oidc-client";
import { audience, authorizationUrl, client, testProviderForFile } from "../../../tests/support/dev-oidc-helpers";
import { startDevOidcProvider } from "./provider.server";

// The sign-in and logout pages: provider-interactions.server.test.ts.
const world = testProviderForFile();
const { clientArgs } = world;

describe("discovery and keys", () => {
  test("publishes the endpoints, S256 PKCE and an RS256 signing key", async () => {
    const discovery = await fetchDiscovery(world.provider.issuer);
    expect(discovery.issuer).toBe(world.provider.issuer);
    expect(discovery.authorization_endpoint).toBe(`${world.provider.issuer}/auth`);
    expect(discovery.token_endpoint).toBe(`${world.provider.issuer}/token`);
    expect(discovery.jwks_uri).toBe(`${world.provider.issuer}/jwks`);
    expect(discovery.end_session_endpoint).toBe(`${world.provider.issuer}/session/end`);
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
    const jwks = createRemoteJWKSet(new URL(`${world.provider.issuer}/jwks`));

    const id = await jwtVerify(tokens.id_token, jwks, {
      issuer: world.provider.issuer,
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
      issuer: world.provider.issuer,
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
    const jwks = createRemoteJWKSet(new URL(`${world.provider.issuer}/jwks`));
    const access = await jwtVerify(String(body.access_token), jwks, {
      issuer: world.provider.issuer,
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
    const url = authorizationUrl(world.provider);
    url.searchParams.delete("code_challenge");
    url.searchParams.delete("code_challenge_method");
    const response = await fetch(url, { redirect: "manual" });
    const location = new URL(response.headers.get("location") ?? "", world.provider.issuer);
    expect(location.origin + location.pathname).toBe(client.redirect_uris[0]);
    expect(location.searchParams.get("error")).toBe("invalid_request");
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
