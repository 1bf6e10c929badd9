import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

import { exportJWK, generateKeyPair } from "jose";
import type { Configuration, Interaction, KoaContextWithOIDC, Provider } from "oidc-provider";

import { demoAccounts, findDemoAccount, type DemoAccount } from "./accounts";
import {
  languageFromAcceptLanguage,
  languageFromUiLocales,
  renderAccountListPage,
  renderErrorPage,
  renderLogoutPage,
  renderPostLogoutPage,
  type PageLanguage,
} from "./pages.server";

// The built-in identity provider for development and tests (ARCHITECTURE: "identity"),
// started only outside production when no issuer is configured. It is a real,
// certified OpenID provider so the app's sign-in code path is the production one.

export type DevOidcClient = {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
};

export type DevOidcProviderOptions = {
  /** e.g. http://localhost:3001; ignored when `port` is 0 (the real port is not known yet). */
  issuer: string;
  port: number;
  /** Defaults to 127.0.0.1 so the provider is never reachable from the network. */
  host?: string;
  clients: DevOidcClient[];
  /** API audience of access tokens, e.g. "skribent-api". */
  audience: string;
};

export type DevOidcProvider = {
  issuer: string;
  port: number;
  close(): Promise<void>;
};

/** Auth0's wording; the app matches it to show its "verify your e-mail" waiting screen (SPEC §2). */
export const UNVERIFIED_EMAIL_DESCRIPTION = "Please verify your email before logging in.";

const COOKIE_PREFIX = "devoidc_";
const SCOPES = ["openid", "profile", "email"];
const INTERACTION_ROUTE = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?\/?$/;
const FORM_BODY_LIMIT = 16 * 1024;

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

function resourceIdFor(audience: string): string {
  // oidc-provider only accepts absolute URIs as resource indicators, while Auth0-style
  // audiences are often bare names like "skribent-api"; those get a private URN.
  const parsed = URL.canParse(audience) ? new URL(audience) : undefined;
  if (parsed && !parsed.hash) return audience;
  return `urn:skribent:dev-oidc:audience:${encodeURIComponent(audience)}`;
}

function claimsOf(account: DemoAccount) {
  return {
    sub: account.id,
    name: account.name,
    given_name: account.givenName,
    family_name: account.familyName,
    email: account.email,
    email_verified: account.emailVerified,
    locale: account.locale,
  };
}

function languageOf(ctx: KoaContextWithOIDC): PageLanguage {
  return (
    languageFromUiLocales(ctx.oidc?.params?.ui_locales) ??
    languageFromAcceptLanguage(ctx.get("accept-language")) ??
    "de"
  );
}

function buildConfiguration(args: {
  clients: DevOidcClient[];
  audience: string;
  resourceId: string;
  signingKey: Record<string, unknown>;
  InvalidTarget: new (description?: string) => Error;
}): Configuration {
  const { audience, resourceId, InvalidTarget } = args;
  return {
    clients: args.clients.map((client) => ({
      ...client,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      // oidc-provider also accepts client_secret_post for a client registered with basic.
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: "RS256",
    })),
    jwks: { keys: [args.signingKey] },
    clientAuthMethods: ["client_secret_basic", "client_secret_post"],
    responseTypes: ["code"],
    scopes: SCOPES,
    claims: {
      openid: ["sub"],
      profile: ["name", "given_name", "family_name", "locale"],
      email: ["email", "email_verified"],
    },
    // The access token belongs to the API, not to userinfo, so the ID token must carry the profile.
    conformIdTokenClaims: false,
    extraParams: ["audience"],
    pkce: { required: () => true },
    routes: {
      authorization: "/auth",
      token: "/token",
      userinfo: "/me",
      jwks: "/jwks",
      end_session: "/session/end",
    },
    cookies: {
      names: {
        session: `${COOKIE_PREFIX}session`,
        interaction: `${COOKIE_PREFIX}interaction`,
        resume: `${COOKIE_PREFIX}interaction_resume`,
      },
      keys: [randomBytes(32).toString("base64url")],
      long: { httpOnly: true, sameSite: "lax" },
      short: { httpOnly: true, sameSite: "lax" },
    },
    ttl: {
      Session: 12 * 60 * 60,
      Grant: 12 * 60 * 60,
      Interaction: 60 * 60,
      AuthorizationCode: 60,
      AccessToken: 60 * 60,
      IdToken: 60 * 60,
      RefreshToken: 14 * 24 * 60 * 60,
      ClientCredentials: 10 * 60,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // The app talks to the provider from its server; browsers never call it cross-origin.
    clientBasedCORS: () => false,
    findAccount(_ctx, sub) {
      const account = findDemoAccount(sub);
      if (!account) return undefined;
      return { accountId: account.id, claims: () => claimsOf(account) };
    },
    // The API decides the admin domain from the verified token alone, without calling userinfo.
    extraTokenClaims(_ctx, token) {
      const account = token.accountId ? findDemoAccount(token.accountId) : undefined;
      return account ? { email: account.email } : undefined;
    },
    renderError(ctx, out) {
      ctx.type = "html";
      ctx.body = renderErrorPage({
        lang: languageOf(ctx),
        error: out.error,
        description: out.error_description,
      });
    },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource(ctx, form) {
          ctx.type = "html";
          ctx.body = renderLogoutPage({ lang: languageOf(ctx), form });
        },
        postLogoutSuccessSource(ctx) {
          ctx.type = "html";
          ctx.body = renderPostLogoutPage({ lang: languageOf(ctx) });
        },
      },
      resourceIndicators: {
        enabled: true,
        // Auth0 clients send `audience=<api>` instead of RFC 8707's `resource`.
        defaultResource(ctx, _client, oneOf) {
          if (oneOf) return oneOf;
          const requested = ctx.oidc.params?.audience;
          if (typeof requested !== "string" || requested === "") return undefined;
          // Unknown audiences go through the same mapping so they fail as "unknown" (invalid_target).
          return requested === audience ? resourceId : resourceIdFor(requested);
        },
        getResourceServerInfo(_ctx, resourceIndicator) {
          if (resourceIndicator !== resourceId) throw new InvalidTarget();
          return {
            audience,
            scope: SCOPES.join(" "),
            accessTokenTTL: 60 * 60,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          };
        },
        // Without this the token endpoint issues an opaque userinfo token whenever
        // `openid` is requested and the client does not repeat `resource` there.
        useGrantedResource: () => true,
      },
    },
  };
}

/** Bare audiences are not URIs; swap them for the URN before oidc-provider validates `resource`. */
function canonicalizeResourceParam(req: http.IncomingMessage, audience: string, resourceId: string) {
  if (resourceId === audience || !req.url?.includes("resource=")) return;
  const url = new URL(req.url, "http://dev-oidc.invalid");
  const resources = url.searchParams.getAll("resource");
  if (!resources.includes(audience)) return;
  url.searchParams.delete("resource");
  for (const value of resources) {
    url.searchParams.append("resource", value === audience ? resourceId : value);
  }
  req.url = `${url.pathname}${url.search}`;
}

async function readFormBody(req: http.IncomingMessage): Promise<URLSearchParams> {
  const type = req.headers["content-type"] ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    return new URLSearchParams();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > FORM_BODY_LIMIT) throw new Error("form body too large");
    chunks.push(buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function sendHtml(res: http.ServerResponse, status: number, html: string) {
  res.statusCode = status;
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  res.setHeader("Cache-Control", "no-store");
  res.end(html);
}

type ProviderErrorShape = { statusCode?: unknown; error?: unknown; error_description?: unknown };

function asProviderError(error: unknown): { status: number; error: string; description?: string } | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { statusCode, error: code, error_description: description } = error as ProviderErrorShape;
  if (typeof statusCode !== "number" || statusCode >= 500 || typeof code !== "string") return undefined;
  return {
    status: statusCode,
    error: code,
    description: typeof description === "string" ? description : undefined,
  };
}

async function grantConsent(provider: Provider, interaction: Interaction): Promise<string> {
  // Development accounts consent to everything the registered client asks for.
  const accountId = interaction.session?.accountId;
  const clientId = interaction.params.client_id;
  if (!accountId || typeof clientId !== "string") throw new Error("consent without a signed-in account");
  const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
  const grant = existing ?? new provider.Grant({ accountId, clientId });
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = interaction.prompt.details;
  if (missingOIDCScope?.length) grant.addOIDCScope(missingOIDCScope.join(" "));
  if (missingOIDCClaims?.length) grant.addOIDCClaims(missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  return grant.save();
}

async function handleInteraction(
  provider: Provider,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: { uid: string; login: boolean },
) {
  const interaction = await provider.interactionDetails(req, res);
  const lang = languageFromUiLocales(interaction.params.ui_locales) ?? "de";
  if (interaction.uid !== route.uid) {
    sendHtml(res, 400, renderErrorPage({ lang, error: "invalid_request", description: "interaction mismatch" }));
    return;
  }

  if (route.login) {
    if (req.method !== "POST") {
      res.setHeader("Allow", "POST");
      sendHtml(res, 405, renderErrorPage({ lang, error: "method_not_allowed" }));
      return;
    }
    const accountId = (await readFormBody(req)).get("accountId") ?? "";
    const account = findDemoAccount(accountId);
    if (interaction.prompt.name !== "login" || !account) {
      sendHtml(res, 400, renderErrorPage({ lang, error: "invalid_request", description: "unknown account" }));
      return;
    }
    if (!account.emailVerified) {
      await provider.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: UNVERIFIED_EMAIL_DESCRIPTION },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.id } },
      { mergeWithLastSubmission: false },
    );
    return;
  }

  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    sendHtml(res, 405, renderErrorPage({ lang, error: "method_not_allowed" }));
    return;
  }
  if (interaction.prompt.name === "login") {
    const clientId = interaction.params.client_id;
    sendHtml(
      res,
      200,
      renderAccountListPage({
        lang,
        action: `/interaction/${interaction.uid}/login`,
        accounts: demoAccounts,
        clientName: typeof clientId === "string" ? clientId : undefined,
      }),
    );
    return;
  }
  if (interaction.prompt.name === "consent") {
    const grantId = await grantConsent(provider, interaction);
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  sendHtml(
    res,
    400,
    renderErrorPage({
      lang,
      error: "invalid_request",
      description: `unsupported prompt ${interaction.prompt.name}`,
    }),
  );
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
  const { Provider, errors } = await loadOidcProvider();
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
      resourceId,
      signingKey,
      InvalidTarget: errors.InvalidTarget,
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
      const match = INTERACTION_ROUTE.exec(path);
      if (!match) {
        canonicalizeResourceParam(req, options.audience, resourceId);
        void oidc(req, res);
        return;
      }
      const route = { uid: match[1] ?? "", login: match[2] !== undefined };
      handleInteraction(provider, req, res, route).catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const lang = languageFromAcceptLanguage(req.headers["accept-language"]) ?? "de";
        const known = asProviderError(error);
        if (known) {
          sendHtml(res, known.status, renderErrorPage({ lang, error: known.error, description: known.description }));
          return;
        }
        console.error("[dev-oidc] interaction failed", error);
        sendHtml(res, 500, renderErrorPage({ lang, error: "server_error" }));
      });
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
