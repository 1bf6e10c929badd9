/**
 * Shared fixtures for the dev OIDC provider test files (provider-*.server.test.ts). Not a test file itself.
 */
import { afterAll, beforeAll } from "vitest";

import {
  startDevOidcProvider,
  type DevOidcProvider,
  type DevOidcProviderOptions,
} from "~/services/dev-oidc/provider.server";

export const client = {
  client_id: "skribent-test",
  client_secret: "test-secret-that-is-long-enough-0123456789",
  redirect_uris: ["http://app.test/auth/callback"],
  post_logout_redirect_uris: ["http://app.test/signed-out"],
};
export const audience = "skribent-api";

/** A provider on a free port for the test client and audience (and what `options` adds, e.g. an API scope). */
export function startTestProvider(options: Partial<DevOidcProviderOptions> = {}): Promise<DevOidcProvider> {
  return startDevOidcProvider({
    issuer: "http://ignored.invalid",
    port: 0,
    clients: [client],
    audience,
    ...options,
  });
}

/** The arguments tests/support/oidc-client needs to sign accountId in at provider as the test client. */
export function clientArgsFor(provider: DevOidcProvider, accountId: string) {
  return {
    issuer: provider.issuer,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    redirectUri: client.redirect_uris[0]!,
    accountId,
  };
}

/** The test client's authorization request at `provider`, as a browser opens it: code flow, a fixed PKCE challenge. */
export function authorizationUrl(provider: DevOidcProvider, params: Record<string, string> = {}) {
  const url = new URL(`${provider.issuer}/auth`);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0]!,
    response_type: "code",
    scope: "openid",
    state: "s",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    ...params,
  }).toString();
  return url;
}

/** What a provider test file works with: its provider, and the test client's sign-in arguments there. */
export type TestProviderWorld = {
  provider: DevOidcProvider;
  clientArgs(accountId: string): ReturnType<typeof clientArgsFor>;
};

/** For a test file: one test provider (see startTestProvider) started before its tests and closed after them. */
export function testProviderForFile(options: Partial<DevOidcProviderOptions> = {}): TestProviderWorld {
  const world = {
    clientArgs: (accountId: string) => clientArgsFor(world.provider, accountId),
  } as TestProviderWorld;
  beforeAll(async () => {
    world.provider = await startTestProvider(options);
  });
  afterAll(async () => {
    await world.provider?.close();
  });
  return world;
}
