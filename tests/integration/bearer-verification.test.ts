import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertUserByIdentity } from "~/models/user.server";
import { loader as usageLoader } from "~/routes/api.usage-dashboard";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { getDiscovery, resetOidcCaches } from "~/services/web/auth.server";
import { getConfig, setConfig } from "~/services/config/config.server";
import { startTokenIssuer } from "../support/token-issuer";
import { callRoute, request, setupTestApp } from "../setup/app";

// The admin check on the JSON API (issue 8) needs a verified e-mail, and access tokens often say nothing about
// verification. A silent token counts as verified only when a web sign-in's ID token verified that very
// address; a token that says "not verified" never does; look-alike domains never pass.
setupTestApp();
let issuer: Awaited<ReturnType<typeof startTokenIssuer>>;

beforeAll(async () => {
  issuer = await startTokenIssuer();
  setConfig({ ...getConfig(), oidc: { ...getConfig().oidc, issuer: issuer.url } });
  resetOidcCaches();
});
afterAll(async () => {
  resetOidcCaches();
  await issuer.close();
});

async function usageWith(claims: { sub: string; email?: string; email_verified?: boolean }) {
  const token = await issuer.sign(claims, getConfig().oidc.audience);
  return callRoute(usageLoader, request("/api/usage-dashboard", { headers: { Authorization: `Bearer ${token}` } }));
}

/** The user row a web sign-in leaves: the ID token's address and whether the provider verified it. */
const webSignIn = (sub: string, email: string, emailVerified: boolean) =>
  upsertUserByIdentity({ issuer: issuer.url, subject: sub, email, emailVerified, name: null, locale: "de" });

describe("a bearer token silent about email_verified", () => {
  it("is refused the admin calls when nobody verified the address", async () => {
    const response = await usageWith({ sub: "silent-1", email: "ops@skribent.example" });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ detail: "Access denied - unauthorized domain" });
  });

  it("passes when a web sign-in verified the same address", async () => {
    await webSignIn("silent-2", "ops2@skribent.example", true);
    const response = await usageWith({ sub: "silent-2", email: "ops2@skribent.example" });
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveProperty("users");
  });

  it("is refused when the web sign-in verified another address, or did not verify it", async () => {
    await webSignIn("silent-3", "someone@praxis.example", true);
    expect((await usageWith({ sub: "silent-3", email: "ops3@skribent.example" })).status).toBe(403);
    await webSignIn("silent-4", "ops4@skribent.example", false);
    expect((await usageWith({ sub: "silent-4", email: "ops4@skribent.example" })).status).toBe(403);
  });
});

describe("a bearer token that speaks about email_verified", () => {
  it("is believed when it says false, even after a verified web sign-in", async () => {
    await webSignIn("loud-1", "ops5@skribent.example", true);
    const response = await usageWith({ sub: "loud-1", email: "ops5@skribent.example", email_verified: false });
    expect(response.status).toBe(403);
  });

  it("refuses look-alike and sub-domains even when verified", async () => {
    for (const email of ["ops@skribent.example.evil.test", "ops@skribent-example.test", "ops@eu.skribent.example"]) {
      const response = await usageWith({ sub: `look-${email}`, email, email_verified: true });
      expect(response.status).toBe(403);
    }
    expect((await usageWith({ sub: "loud-2", email: "ops6@skribent.example", email_verified: true })).status).toBe(200);
  });
});

describe("a bearer token's times", () => {
  it("is refused when issued beyond the 60 s leeway in the future, and accepted within it", async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: "times-1", email: "ops7@skribent.example", email_verified: true };
    const call = async (token: string) =>
      callRoute(usageLoader, request("/api/usage-dashboard", { headers: { Authorization: `Bearer ${token}` } }));
    const future = await call(await issuer.sign(claims, getConfig().oidc.audience, now + 3600));
    expect(future.status).toBe(401);
    const expired = await call(await issuer.sign(claims, getConfig().oidc.audience, now - 3600));
    expect(expired.status).toBe(401);
    expect((await call(await issuer.sign(claims, getConfig().oidc.audience, now + 30))).status).toBe(200);
  });

  it("is refused before its nbf (beyond the leeway), and accepted from then on", async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: "times-3", email: "ops10@skribent.example", email_verified: true };
    const call = async (token: string) =>
      callRoute(usageLoader, request("/api/usage-dashboard", { headers: { Authorization: `Bearer ${token}` } }));
    const notYet = await issuer.sign({ ...claims, nbf: now + 600 }, getConfig().oidc.audience);
    expect((await call(notYet)).status).toBe(401);
    const valid = await issuer.sign({ ...claims, nbf: now - 10 }, getConfig().oidc.audience);
    expect((await call(valid)).status).toBe(200);
  });

  it("is refused for another audience or with a signature that does not match", async () => {
    const claims = { sub: "times-2", email: "ops8@skribent.example", email_verified: true };
    const call = async (token: string) =>
      callRoute(usageLoader, request("/api/usage-dashboard", { headers: { Authorization: `Bearer ${token}` } }));
    expect((await call(await issuer.sign(claims, "another-api"))).status).toBe(401);
    const good = await issuer.sign(claims, getConfig().oidc.audience);
    const [head, body, signature] = good.split(".");
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, "base64url").toString()), sub: "someone-else" })).toString("base64url")}.${signature}`;
    expect((await call(forged)).status).toBe(401);
    expect((await call(good)).status).toBe(200);
  });
});

describe("a bearer token's signature", () => {
  const claims = { sub: "sig-1", email: "ops9@skribent.example", email_verified: true };
  const call = async (token: string) =>
    callRoute(usageLoader, request("/api/usage-dashboard", { headers: { Authorization: `Bearer ${token}` } }));
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const body = () => {
    const now = Math.floor(Date.now() / 1000);
    return { ...claims, iss: issuer.url, aud: getConfig().oidc.audience, iat: now, exp: now + 300 };
  };

  it("is refused unsigned (alg none) and HMAC-signed with the provider's public key (alg confusion)", async () => {
    expect((await call(`${b64({ alg: "none", kid: "test-key" })}.${b64(body())}.`)).status).toBe(401);
    const confused = await new SignJWT(body())
      .setProtectedHeader({ alg: "HS256", kid: "test-key" })
      .sign(new TextEncoder().encode(issuer.publicKeyPem));
    expect((await call(confused)).status).toBe(401);
    expect((await call(await issuer.sign(claims, getConfig().oidc.audience))).status).toBe(200);
  });

  it("is refused when it brings its own key (jwk, jku, x5u headers): only the provider's published keys count", async () => {
    const attacker = await generateKeyPair("RS256");
    const attackerJwk = { ...(await exportJWK(attacker.publicKey)), kid: "attacker", alg: "RS256" };
    let fetched = 0;
    const keys = http.createServer((_req, res) => {
      fetched++;
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ keys: [attackerJwk] }));
    });
    await new Promise<void>((resolve) => keys.listen(0, "127.0.0.1", resolve));
    const keysUrl = `http://127.0.0.1:${(keys.address() as AddressInfo).port}/jwks`;
    try {
      const headers = [
        { alg: "RS256", kid: "attacker", jwk: attackerJwk },
        { alg: "RS256", kid: "test-key", jwk: attackerJwk },
        { alg: "RS256", kid: "attacker", jku: keysUrl },
        { alg: "RS256", kid: "attacker", x5u: keysUrl },
      ];
      for (const header of headers) {
        const token = await new SignJWT(body()).setProtectedHeader(header).sign(attacker.privateKey);
        expect((await call(token)).status, JSON.stringify(Object.keys(header))).toBe(401);
      }
      expect(fetched).toBe(0);
    } finally {
      await new Promise<void>((resolve) => keys.close(() => resolve()));
    }
  });
});

describe("the provider's discovery document", () => {
  it("is refused when it names another issuer than the one configured", async () => {
    // A document that answers for OIDC_ISSUER but names another provider (with its endpoints and keys).
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ issuer: issuer.url, jwks_uri: `${issuer.url}/jwks`, token_endpoint: "x" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const saved = getConfig();
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      setConfig({ ...saved, oidc: { ...saved.oidc, issuer: url } });
      resetOidcCaches();
      await expect(getDiscovery()).rejects.toThrow(/another issuer/);
      setConfig({ ...saved, oidc: { ...saved.oidc, issuer: issuer.url } });
      resetOidcCaches();
      await expect(getDiscovery()).resolves.toMatchObject({ issuer: issuer.url });
    } finally {
      setConfig(saved);
      resetOidcCaches();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
