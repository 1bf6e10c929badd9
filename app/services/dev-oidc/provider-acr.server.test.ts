import { createRemoteJWKSet, jwtVerify } from "jose";
import { describe, expect, test } from "vitest";

import {
  authorizeAtDevProvider,
  createCookieJar,
  fetchDiscovery,
  getDevAccessToken,
  type CookieJar,
} from "../../../tests/support/oidc-client";
import { DEV_ACR, findDemoAccount } from "./accounts";
import { audience, authorizationUrl, client, testProviderForFile } from "../../../tests/support/dev-oidc-helpers";

// OIDC_ACR_VALUES (ADR 0019) is tested against this provider end to end (tests/integration/sign-in-acr.test.ts,
// bearer-acr.test.ts), so it must sign in at the level a real provider would: the password alone, or the second
// factor when the client asks for it in acr_values and the account has one — and say so in both tokens.
const world = testProviderForFile();

/** The `acr` of the ID token and of the API access token of one sign-in (in `jar`: a browser signed in before). */
async function acrOfSignIn(accountId: string, acrValues?: string, jar?: CookieJar) {
  const tokens = await getDevAccessToken({
    ...world.clientArgs(accountId),
    audience,
    jar,
    ...(acrValues ? { extraParams: { acr_values: acrValues } } : {}),
  });
  const jwks = createRemoteJWKSet(new URL(`${world.provider.issuer}/jwks`));
  const id = await jwtVerify(tokens.id_token, jwks, { issuer: world.provider.issuer, audience: client.client_id });
  const access = await jwtVerify(tokens.access_token, jwks, { issuer: world.provider.issuer, audience });
  return { id: id.payload.acr, access: access.payload.acr };
}

describe("authentication context (acr)", () => {
  test("publishes the password and the second-factor level", async () => {
    const discovery = await fetchDiscovery(world.provider.issuer);
    expect(discovery.acr_values_supported).toEqual([DEV_ACR.password, DEV_ACR.multiFactor]);
    expect(discovery.claims_supported).toContain("acr");
  });

  test("signs in with the password alone when the client asks for no level", async () => {
    expect(await acrOfSignIn("anna-berger")).toEqual({ id: DEV_ACR.password, access: DEV_ACR.password });
  });

  test("shows the second factor when acr_values asks for it, in the ID token and the access token", async () => {
    const asked = `${DEV_ACR.multiFactor} ${DEV_ACR.password}`;
    expect(await acrOfSignIn("anna-berger", asked)).toEqual({ id: DEV_ACR.multiFactor, access: DEV_ACR.multiFactor });
    expect(await acrOfSignIn("ops-admin", DEV_ACR.multiFactor)).toEqual({
      id: DEV_ACR.multiFactor,
      access: DEV_ACR.multiFactor,
    });
  });

  test("stays at the password for an account without a second factor, though asked", async () => {
    expect(findDemoAccount("paul-neumann")?.secondFactor).toBe(false);
    expect(await acrOfSignIn("paul-neumann", DEV_ACR.multiFactor)).toEqual({
      id: DEV_ACR.password,
      access: DEV_ACR.password,
    });
  });

  test("ignores a level it does not know, as acr_values is only a request", async () => {
    expect(await acrOfSignIn("jonas-keller", "urn:example:unknown-level")).toEqual({
      id: DEV_ACR.password,
      access: DEV_ACR.password,
    });
  });

  test("asks again when this browser signed in with the password alone and the second factor is asked for", async () => {
    const jar = createCookieJar();
    expect(await acrOfSignIn("emily-clarke", undefined, jar)).toEqual({
      id: DEV_ACR.password,
      access: DEV_ACR.password,
    });
    // The provider session alone answers a second request at the same level: no account is chosen again.
    const again = await authorizeAtDevProvider({ ...world.clientArgs("nobody-chosen"), audience, jar });
    expect(again.callback.searchParams.has("code")).toBe(true);
    // Asked for the second factor, it shows the account list again (an unknown account would throw there).
    await expect(
      authorizeAtDevProvider({
        ...world.clientArgs("nobody-chosen"),
        audience,
        jar,
        extraParams: { acr_values: DEV_ACR.multiFactor },
      }),
    ).rejects.toThrow(/account nobody-chosen is not offered/);
    expect(await acrOfSignIn("emily-clarke", DEV_ACR.multiFactor, jar)).toEqual({
      id: DEV_ACR.multiFactor,
      access: DEV_ACR.multiFactor,
    });
    // Now at that level, the session answers without asking.
    const stepped = await authorizeAtDevProvider({
      ...world.clientArgs("nobody-chosen"),
      audience,
      jar,
      extraParams: { acr_values: DEV_ACR.multiFactor },
    });
    expect(stepped.callback.searchParams.has("code")).toBe(true);
  });

  test("marks the account without a second factor on the sign-in page", async () => {
    const jar = createCookieJar();
    const redirect = await jar.fetch(authorizationUrl(world.provider));
    const html = await (await jar.fetch(new URL(redirect.headers.get("location")!, world.provider.issuer))).text();
    const buttons = [...html.matchAll(/<button[^>]*value="([^"]+)"[\s\S]*?<\/button>/g)];
    const marked = buttons.filter(([button]) => button.includes("kein zweiter Faktor")).map(([, id]) => id);
    expect(marked).toEqual(["paul-neumann", "lena-vogel"]);
  });
});
