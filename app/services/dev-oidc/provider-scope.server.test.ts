import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

import { createCookieJar, getDevAccessToken, type CookieJar } from "../../../tests/support/oidc-client";
import { audience, clientArgsFor, startTestProvider } from "../../../tests/support/dev-oidc-helpers";
import type { DevOidcProvider } from "./provider.server";

// OIDC_API_SCOPE (ADR 0021) is tested against this provider (tests/integration/api-scope.test.ts), so its access
// tokens say which scopes the client was granted as a real provider's do (RFC 9068 §2.2.3): the API's scope when the
// client asked for it and the API offers it, never unasked, and a scope nobody offers not at all.
let plain: DevOidcProvider;
let offering: DevOidcProvider;

beforeAll(async () => {
  [plain, offering] = await Promise.all([startTestProvider(), startTestProvider({ apiScope: "skribent.api" })]);
});

afterAll(async () => {
  await Promise.all([plain?.close(), offering?.close()]);
});

/** The `scope` claim of the API access token of one sign-in at `provider` asking for `scope`. */
async function scopeOfSignIn(provider: DevOidcProvider, scope?: string, jar?: CookieJar) {
  const tokens = await getDevAccessToken({ ...clientArgsFor(provider, "anna-berger"), audience, scope, jar });
  const jwks = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
  const access = await jwtVerify(tokens.access_token, jwks, { issuer: provider.issuer, audience });
  return access.payload.scope;
}

describe("the API's scope in access tokens", () => {
  test("is granted when the client asks for it and the API offers it", async () => {
    expect(await scopeOfSignIn(offering, "openid profile email skribent.api")).toBe(
      "openid profile email skribent.api",
    );
    expect(await scopeOfSignIn(offering, "openid skribent.api")).toBe("openid skribent.api");
  });

  test("is not granted when the client does not ask for it", async () => {
    expect(await scopeOfSignIn(offering)).toBe("openid profile email");
    expect(await scopeOfSignIn(offering, "openid")).toBe("openid");
  });

  test("is left out when the API does not offer it, as is any scope nobody offers", async () => {
    expect(await scopeOfSignIn(plain, "openid profile email skribent.api")).toBe("openid profile email");
    expect(await scopeOfSignIn(offering, "openid other.api skribent.api.read skribent.api")).toBe(
      "openid skribent.api",
    );
  });

  test("is asked for later by a browser signed in before without it, and granted then", async () => {
    const jar = createCookieJar();
    expect(await scopeOfSignIn(offering, "openid", jar)).toBe("openid");
    expect(await scopeOfSignIn(offering, "openid skribent.api", jar)).toBe("openid skribent.api");
  });
});
