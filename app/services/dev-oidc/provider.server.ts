import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

import { exportJWK, generateKeyPair } from "jose";

import {
  buildConfiguration,
  canonicalizeResourceParam,
  resourceIdFor,
  type DevOidcClient,
} from "./configuration.server";
import { matchInteractionRoute, policyWithStepUp, serveInteraction } from "./interactions.server";

// The built-in identity provider for development and tests (ARCHITECTURE: "identity"),
// started only outside production when no issuer is configured. It is a real,
// certified OpenID provider so the app's sign-in code path is the production one.

export type { DevOidcClient } from "./configuration.server";
export { UNVERIFIED_EMAIL_DESCRIPTION } from "./interactions.server";

export type DevOidcProviderOptions = {
  /** e.g. http://localhost:3001; ignored when `port` is 0 (the real port is not known yet). */
  issuer: string;
  port: number;
  /** Defaults to 127.0.0.1 so the provider is never reachable from the network. */
  host?: string;
  clients: DevOidcClient[];
  /** API audience of access tokens, e.g. "skribent-api". */
  audience: string;
  /** A scope the API offers, granted to a client that asks for it (OIDC_API_SCOPE); none by default. */
  apiScope?: string | null;
};

export type DevOidcProvider = {
  issuer: string;
  port: number;
  close(): Promise<void>;
};

type OidcProviderModule = typeof import("oidc-provider");

let oidcProviderModule: Promise<OidcProviderModule> | undefined;

/**
 * oidc-provider prints notices through console.warn/info at import (Node 20 is "unsupported")
 * and while constructing (in-memory adapter). They are expected for a development provider,
 * so only its own lines are dropped; everything else still reaches the console.
 */
function withoutProviderNotices<T>(run: () => T): T {
  const { warn, info } = console;
  const isNotice = (args: unknown[]) => typeof args[0] === "string" && /oidc-provider (WARNING|NOTICE):/.test(args[0]);
  const quietWarn = (...args: unknown[]) => {
    if (!isNotice(args)) warn.apply(console, args);
  };
  const quietInfo = (...args: unknown[]) => {
    if (!isNotice(args)) info.apply(console, args);
  };
  console.warn = quietWarn;
  console.info = quietInfo;
  const restore = () => {
    // Someone may have replaced the functions meanwhile (a test spy); leave theirs alone.
    if (console.warn === quietWarn) console.warn = warn;
    if (console.info === quietInfo) console.info = info;
  };
  try {
    const result = run();
    if (result instanceof Promise) {
      return result.finally(restore) as T;
    }
    restore();
    return result;
  } catch (error) {
    restore();
    throw error;
  }
}

function loadOidcProvider(): Promise<OidcProviderModule> {
  oidcProviderModule ??= withoutProviderNotices(() => import("oidc-provider"));
  return oidcProviderModule;
}
function isIgnorableSocketError(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === "ECONNRESET" || code === "EPIPE" || code === "ERR_STREAM_PREMATURE_CLOSE";
}

function isExposedHttpError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { expose, status } = error as { expose?: unknown; status?: unknown };
  return expose === true || status === 404;
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close((error) => (error ? reject(error) : resolve()));
    // Browsers and fetch keep connections alive; without this close() waits for them to time out.
    server.closeAllConnections();
  });
}

export async function startDevOidcProvider(options: DevOidcProviderOptions): Promise<DevOidcProvider> {
  const host = options.host ?? "127.0.0.1";
  const { Provider, errors, interactionPolicy } = await loadOidcProvider();
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = {
    ...(await exportJWK(privateKey)),
    kid: `dev-${randomBytes(8).toString("hex")}`,
    alg: "RS256",
    use: "sig",
  };

  // Requests can arrive between listen() and the provider being ready (port 0 needs
  // the port before the issuer exists); they get a 503 instead of hanging.
  let handle: http.RequestListener | undefined;
  const server = http.createServer((req, res) => {
    if (handle) {
      handle(req, res);
      return;
    }
    res.statusCode = 503;
    res.end();
  });
  await listen(server, options.port, host);
  const { port } = server.address() as AddressInfo;

  try {
    const issuer =
      options.port === 0
        ? `http://${host.includes(":") ? `[${host}]` : host}:${port}`
        : options.issuer.replace(/\/+$/, "");
    if (new URL(issuer).pathname !== "/") {
      throw new Error(`dev-oidc: the issuer must not have a path (got ${issuer})`);
    }
    const resourceId = resourceIdFor(options.audience);
    const configuration = buildConfiguration({
      clients: options.clients,
      audience: options.audience,
      apiScope: options.apiScope ?? null,
      resourceId,
      signingKey,
      InvalidTarget: errors.InvalidTarget,
      policy: policyWithStepUp(interactionPolicy),
    });
    const provider = withoutProviderNotices(() => new Provider(issuer, configuration));
    // Never trust X-Forwarded-* from whoever reaches the loopback port.
    provider.proxy = false;
    provider.on("server_error", (_ctx, error) => {
      console.error("[dev-oidc] server error", error);
    });
    // Replaces Koa's default listener, which would also print client disconnects.
    provider.on("error", (error) => {
      if (isIgnorableSocketError(error) || isExposedHttpError(error)) return;
      console.error("[dev-oidc] unhandled error", error);
    });

    const oidc = provider.callback();
    handle = (req, res) => {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      const route = matchInteractionRoute(path);
      if (!route) {
        canonicalizeResourceParam(req, options.audience, resourceId);
        void oidc(req, res);
        return;
      }
      serveInteraction(provider, req, res, route);
    };

    let closing: Promise<void> | undefined;
    return {
      issuer,
      port,
      close() {
        closing ??= closeServer(server);
        return closing;
      },
    };
  } catch (error) {
    await closeServer(server);
    throw error;
  }
}
