import { z } from "zod";
import type { Env } from "./config.server";

// The workspace's part of the configuration (issue 8): the admin dashboard's hidden path, how an account is told to
// belong to an organisation (SPEC §3 "Usage dashboard user" is_org), and how long a chat conversation is kept.

export const workspaceEnvShape = {
  /** Where the admin dashboard is served; never printed in the interface. */
  ADMIN_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9][A-Za-z0-9_-]{2,62}$/, "must be one path segment like /betrieb-7f3k")
    .default("/betrieb"),
  /** Comma-separated e-mail domains whose verified addresses count as organisation accounts. */
  ORG_EMAIL_DOMAINS: z.string().default(""),
  /** An identity-provider claim that marks an organisation account when it is true (or "true"). */
  OIDC_ORG_CLAIM: z.string().min(1).optional(),
  /** A chat conversation is deleted this long after its last message (and at once by "clear chat"). */
  CHAT_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(24),
};

export function workspaceConfig(env: Env) {
  return {
    admin: { path: env.ADMIN_PATH },
    organisations: {
      emailDomains: env.ORG_EMAIL_DOMAINS.split(",")
        .map((domain) => domain.trim().toLowerCase())
        .filter(Boolean),
      claim: env.OIDC_ORG_CLAIM,
    },
    chat: { retentionMs: env.CHAT_RETENTION_HOURS * 3_600_000 },
  };
}
