import { loader as filesLoader } from "~/routes/api.files";
import { action as promptsAction } from "~/routes/api.prompts";
import { callRoute, request, TEST_CLIENT } from "../setup/app";
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

/** A JWT's claims as issued, unverified: what a test expects a provider to have put in. */
export const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());

/** A request to `path` with `token` as its bearer token. */
export const bearerRequest = (token: string, path: string, init: RequestInit = {}) =>
  request(path, { ...init, headers: { ...init.headers, Authorization: `Bearer ${token}` } });

/** What a bearer token opens, for the token-checking tests: a read (the file list) and a write (a saved prompt). */
export const listFilesWith = (token: string) => callRoute(filesLoader, bearerRequest(token, "/api/files"));
export const savePromptWith = (token: string, title: string) =>
  callRoute(
    promptsAction,
    bearerRequest(token, "/api/prompts", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ title, prompt_text: "Kürzer bitte" }),
    }),
  );
