import { z } from "zod";
import { acrValuesSetting } from "./acr.server";
import { apiScopeSetting } from "./api-scope.server";
import { persistedDevSecret } from "./secrets.server";

// The identity provider's part of the configuration (ADR 0003): which provider, this client at it, and what its
// tokens must say to be accepted here. Without OIDC_ISSUER outside production, the embedded development provider.

export const oidcEnvShape = {
  OIDC_ISSUER: z.string().url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_AUDIENCE: z.string().min(1).default("skribent-api"),
  OIDC_ACR_VALUES: acrValuesSetting,
  OIDC_API_SCOPE: apiScopeSetting,
  /**
   * ASVS 7.6.2: `login` (or `consent`, `select_account`, as the provider supports them) makes every sign-in an explicit
   * action at the provider, even while it still holds a session; unset, a provider session signs in without a click.
   */
  OIDC_PROMPT: z.enum(["login", "consent", "select_account"]).optional(),
  DEV_OIDC_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
};

type Env = z.output<z.ZodObject<typeof oidcEnvShape>> & { APP_ENV: string };

export function oidcConfig(env: Env, dataDir: string) {
  const tokenRules = {
    audience: env.OIDC_AUDIENCE,
    acrValues: env.OIDC_ACR_VALUES,
    apiScope: env.OIDC_API_SCOPE,
    prompt: env.OIDC_PROMPT ?? null,
  };
  if (!env.OIDC_ISSUER && env.APP_ENV !== "production") {
    return {
      dev: true as const,
      issuer: `http://localhost:${env.DEV_OIDC_PORT}`,
      devPort: env.DEV_OIDC_PORT,
      clientId: "skribent-dev",
      clientSecret: persistedDevSecret(dataDir, "dev-oidc-client-secret"),
      ...tokenRules,
    };
  }
  return {
    dev: false as const,
    issuer: env.OIDC_ISSUER!.replace(/\/$/, ""),
    devPort: 0,
    clientId: env.OIDC_CLIENT_ID!,
    clientSecret: env.OIDC_CLIENT_SECRET!,
    ...tokenRules,
  };
}
