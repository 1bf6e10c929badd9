import { randomBytes } from "node:crypto";
import type http from "node:http";

import type { Configuration, InteractionPolicy, KoaContextWithOIDC } from "oidc-provider";

import { DEV_ACR, findDemoAccount, type DemoAccount } from "./accounts";
import {
  languageFromAcceptLanguage,
  languageFromUiLocales,
  renderErrorPage,
  renderLogoutPage,
  renderPostLogoutPage,
  type PageLanguage,
} from "./pages.server";

// How the development provider is configured: clients, claims, cookies, lifetimes, the logout pages, and the
// mapping of Auth0-style audiences onto oidc-provider's resource indicators.

export type DevOidcClient = {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
};

const COOKIE_PREFIX = "devoidc_";
const SCOPES = ["openid", "profile", "email"];

export function resourceIdFor(audience: string): string {
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

export function buildConfiguration(args: {
  clients: DevOidcClient[];
  audience: string;
  /** The scope the API offers besides the OpenID ones (OIDC_API_SCOPE), or null. */
  apiScope: string | null;
  resourceId: string;
  signingKey: Record<string, unknown>;
  InvalidTarget: new (description?: string) => Error;
  /** oidc-provider's prompts, with the step-up of interactions.server.ts. */
  policy: InteractionPolicy;
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
    // Published as acr_values_supported; every ID token says which one the sign-in reached (interactions.server.ts),
    // as Keycloak's and Entra ID's do, not only when the client asked for a level.
    acrValues: Object.values(DEV_ACR),
    claims: {
      acr: null,
      openid: ["sub", "acr"],
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
    interactions: { policy: args.policy, url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // The app talks to the provider from its server; browsers never call it cross-origin.
    clientBasedCORS: () => false,
    findAccount(_ctx, sub) {
      const account = findDemoAccount(sub);
      if (!account) return undefined;
      return { accountId: account.id, claims: () => claimsOf(account) };
    },
    // The API decides the admin domain from the verified token alone, without calling userinfo; and, like the
    // ID token, the access token says how the user signed in (RFC 9068 §2.2.1), which OIDC_ACR_VALUES checks.
    extraTokenClaims(ctx, token) {
      const account = token.accountId ? findDemoAccount(token.accountId) : undefined;
      if (!account) return undefined;
      const acr = ctx.oidc.entities.AuthorizationCode?.acr;
      return { email: account.email, email_verified: account.emailVerified, ...(acr ? { acr } : {}) };
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
            // The access token's `scope` is what the client asked for of these (RFC 9068 §2.2.3), as at a provider
            // where the API is registered with its scope (ADR 0021): asked for, it is granted; never unasked.
            scope: [...SCOPES, ...(args.apiScope ? [args.apiScope] : [])].join(" "),
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
export function canonicalizeResourceParam(req: http.IncomingMessage, audience: string, resourceId: string) {
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
