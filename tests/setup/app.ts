import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { resetOidcCaches } from "~/services/web/auth.server";
import { buildConfig, parseEnv, setConfig, type Config } from "~/services/config/config.server";
import { startDevOidcProvider, type DevOidcProvider } from "~/services/dev-oidc/provider.server";
import { startSession } from "~/services/web/session.server";
import { createStorage, setStorage } from "~/services/storage/storage.server";
import { upsertUserByIdentity } from "~/models/user.server";
import { startS3rver } from "../support/s3rver";
import { setupTestDatabase } from "./db";

export const APP_URL = "http://localhost:3999";
export const TEST_CLIENT = {
  clientId: "skribent-test",
  clientSecret: "test-client-secret-test-client-secret",
  redirectUri: `${APP_URL}/auth/callback`,
};

/**
 * The app as a test sees it: a fresh database, local object storage in a temp
 * directory, a configuration, and (optionally) a real development OpenID
 * provider on a free port acting as "the configured identity provider".
 */
export function setupTestApp(
  options: { provider?: boolean; storage?: "local" | "s3"; env?: Record<string, string> } = {},
) {
  const database = setupTestDatabase();
  const state: {
    config?: Config;
    provider?: DevOidcProvider;
    dir?: string;
    s3?: Awaited<ReturnType<typeof startS3rver>>;
  } = {};

  beforeAll(async () => {
    state.dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-app-"));
    if (options.provider) {
      state.provider = await startDevOidcProvider({
        issuer: "http://127.0.0.1:0",
        port: 0,
        audience: "skribent-api",
        // As at boot: the API offers the scope the app is configured to require.
        apiScope: options.env?.OIDC_API_SCOPE,
        clients: [
          {
            client_id: TEST_CLIENT.clientId,
            client_secret: TEST_CLIENT.clientSecret,
            redirect_uris: [TEST_CLIENT.redirectUri],
            post_logout_redirect_uris: [`${APP_URL}/login?signedOut=1`],
          },
        ],
      });
    }
    if (options.storage === "s3") state.s3 = await startS3rver();
    const s3Env: Record<string, string> = state.s3
      ? {
          STORAGE_DRIVER: "s3",
          S3_BUCKET: state.s3.bucket,
          S3_ENDPOINT: state.s3.endpoint,
          S3_REGION: "us-east-1",
          S3_ACCESS_KEY_ID: "S3RVER",
          S3_SECRET_ACCESS_KEY: "S3RVER",
        }
      : {};
    state.config = buildConfig(
      parseEnv({
        APP_ENV: "test",
        APP_URL,
        DATA_DIR: state.dir,
        COOKIE_SECRET: "x".repeat(40),
        STORAGE_SIGNING_SECRET: "y".repeat(40),
        OIDC_ISSUER: state.provider?.issuer ?? "http://127.0.0.1:9",
        OIDC_CLIENT_ID: TEST_CLIENT.clientId,
        OIDC_CLIENT_SECRET: TEST_CLIENT.clientSecret,
        ...s3Env,
        ...options.env,
      }),
    );
    setConfig(state.config);
    setStorage(createStorage(state.config.storage));
    resetOidcCaches();
  });

  afterAll(async () => {
    await state.provider?.close();
    await state.s3?.close();
    if (state.dir) fs.rmSync(state.dir, { recursive: true, force: true });
  });

  return {
    database,
    get config() {
      return state.config!;
    },
    get issuer() {
      if (!state.provider) throw new Error("setupTestApp({ provider: true }) needed");
      return state.provider.issuer;
    },
  };
}

/** A signed-in user and the Cookie header of their session. */
export async function signedInUser(args: { email: string; name?: string; subject?: string; issuer?: string }) {
  const user = await upsertUserByIdentity({
    issuer: args.issuer ?? "http://127.0.0.1:9",
    subject: args.subject ?? args.email,
    email: args.email,
    emailVerified: true,
    name: args.name ?? null,
    locale: "de",
  });
  const setCookie = await startSession({ userId: user.id, idToken: null });
  return { user, cookie: setCookie.split(";")[0] };
}

export function request(pathname: string, init: RequestInit & { cookie?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.cookie) headers.set("Cookie", init.cookie);
  return new Request(`${APP_URL}${pathname}`, { ...init, headers });
}

export async function callRoute<T extends (args: never) => unknown>(
  fn: T,
  req: Request,
  params: Record<string, string> = {},
): Promise<Response> {
  try {
    const result = await (fn as unknown as (a: unknown) => Promise<unknown>)({ request: req, params, context: {} });
    if (result instanceof Response) return result;
    return new Response(JSON.stringify(result), { status: 200, headers: { "Content-Type": "application/json" } });
  } catch (thrown) {
    if (thrown instanceof Response) return thrown;
    throw thrown;
  }
}
