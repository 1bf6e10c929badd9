// oidc-provider 9 ships no type declarations. This covers only the surface the
// development provider uses; widen it here rather than casting at call sites.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export interface ClientMetadata {
    client_id: string;
    client_secret: string;
    redirect_uris: string[];
    post_logout_redirect_uris?: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    id_token_signed_response_alg?: string;
  }

  export interface Client {
    clientId: string;
    clientName?: string;
  }

  export interface OIDCContext {
    params?: Record<string, unknown>;
    client?: Client;
    /** The models of this request; at the token endpoint the code being redeemed, with the sign-in's acr. */
    entities: { AuthorizationCode?: { acr?: string } };
    /** The browser's provider session and the level its sign-in reached. */
    session?: { accountId?: string };
    acr?: string;
    /** What the interaction just finished with, while the authorization request resumes. */
    result?: { login?: unknown };
  }

  /** The Koa context oidc-provider hands to its configuration callbacks. */
  export interface KoaContextWithOIDC {
    oidc: OIDCContext;
    type: string;
    body: unknown;
    status: number;
    host: string;
    get(field: string): string;
  }

  export interface ErrorOut {
    error: string;
    error_description?: string;
    [key: string]: unknown;
  }

  export interface AccountClaims {
    sub: string;
    [claim: string]: unknown;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): AccountClaims | Promise<AccountClaims>;
  }

  export interface ResourceServerInfo {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: "opaque" | "jwt";
    jwt?: { sign?: { alg?: string; kid?: string } };
  }

  export interface TokenLike {
    accountId?: string;
    kind?: string;
  }

  export interface InteractionLike {
    uid: string;
  }

  export interface Configuration {
    clients?: ClientMetadata[];
    jwks?: { keys: Array<Record<string, unknown>> };
    cookies?: {
      names?: { session?: string; interaction?: string; resume?: string };
      keys?: string[];
      long?: { httpOnly?: boolean; sameSite?: "lax" | "strict" | "none" };
      short?: { httpOnly?: boolean; sameSite?: "lax" | "strict" | "none" };
    };
    claims?: Record<string, string[] | null>;
    acrValues?: string[];
    scopes?: string[];
    responseTypes?: string[];
    clientAuthMethods?: string[];
    conformIdTokenClaims?: boolean;
    extraParams?: string[];
    pkce?: { required?: (ctx: KoaContextWithOIDC, client: Client) => boolean };
    routes?: Record<string, string>;
    ttl?: Record<string, number>;
    interactions?: {
      policy?: InteractionPolicy;
      url?: (ctx: KoaContextWithOIDC, interaction: InteractionLike) => Promise<string> | string;
    };
    clientBasedCORS?: (ctx: KoaContextWithOIDC, origin: string, client: Client) => boolean;
    findAccount?: (
      ctx: KoaContextWithOIDC,
      sub: string,
      token?: TokenLike,
    ) => Promise<Account | undefined> | Account | undefined;
    extraTokenClaims?: (
      ctx: KoaContextWithOIDC,
      token: TokenLike,
    ) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined;
    renderError?: (ctx: KoaContextWithOIDC, out: ErrorOut, error: Error) => Promise<void> | void;
    features?: {
      devInteractions?: { enabled: boolean };
      userinfo?: { enabled: boolean };
      rpInitiatedLogout?: {
        enabled: boolean;
        logoutSource?: (ctx: KoaContextWithOIDC, form: string) => Promise<void> | void;
        postLogoutSuccessSource?: (ctx: KoaContextWithOIDC) => Promise<void> | void;
      };
      resourceIndicators?: {
        enabled: boolean;
        defaultResource?: (
          ctx: KoaContextWithOIDC,
          client: Client,
          oneOf?: string[],
        ) => Promise<string | string[] | undefined> | string | string[] | undefined;
        getResourceServerInfo?: (
          ctx: KoaContextWithOIDC,
          resourceIndicator: string,
          client: Client,
        ) => Promise<ResourceServerInfo> | ResourceServerInfo;
        useGrantedResource?: (ctx: KoaContextWithOIDC, model: unknown) => Promise<boolean> | boolean;
      };
    };
  }

  export interface InteractionPrompt {
    name: string;
    reasons: string[];
    details: {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
      [key: string]: unknown;
    };
  }

  export interface Interaction {
    uid: string;
    returnTo: string;
    prompt: InteractionPrompt;
    params: Record<string, unknown>;
    session?: { accountId: string; uid?: string };
    grantId?: string;
  }

  export class Check {
    constructor(reason: string, description: string, check: (ctx: KoaContextWithOIDC) => boolean | Promise<boolean>);
    static readonly REQUEST_PROMPT: true;
    static readonly NO_NEED_TO_PROMPT: false;
  }

  export interface Prompt {
    name: string;
    checks: Check[];
  }

  /** The prompts oidc-provider runs through before it answers an authorization request. */
  export type InteractionPolicy = Prompt[] & { get(name: string): Prompt | undefined };

  export const interactionPolicy: { base(): InteractionPolicy; Check: typeof Check };

  export type InteractionResult =
    | { login: { accountId: string; remember?: boolean; acr?: string } }
    | { consent: { grantId?: string } }
    | { error: string; error_description?: string };

  export class Grant {
    constructor(properties: { accountId: string; clientId: string });
    static find(id: string): Promise<Grant | undefined>;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    readonly Grant: typeof Grant;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResult,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export class OIDCProviderError extends Error {
    error: string;
    error_description?: string;
    statusCode: number;
    status: number;
    expose: boolean;
  }

  export const errors: {
    OIDCProviderError: typeof OIDCProviderError;
    InvalidTarget: new (description?: string) => OIDCProviderError;
    SessionNotFound: new (description?: string) => OIDCProviderError;
  };

  export default Provider;
}
