import { request, TEST_CLIENT } from "../setup/app";
import { getDevAccessToken } from "./oidc-client";

/**
 * An external API client for contract tests: a real bearer token from the
 * development provider, then requests with JSON bodies.
 */
export async function apiClientFor(issuer: string, accountId: string) {
  const { access_token } = await getDevAccessToken({ issuer, ...TEST_CLIENT, accountId, audience: "skribent-api" });
  return (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${access_token}`);
    if (init.json !== undefined) headers.set("Content-Type", "application/json");
    return request(path, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  };
}
export type ApiClient = Awaited<ReturnType<typeof apiClientFor>>;
