import { z } from "zod";

// The workspace's part of the configuration (issue 8): the admin dashboard's hidden path, how an account is told to
// belong to an organisation (SPEC §3 "Usage dashboard user" is_org), how long a chat conversation and audio are
// kept, and the unit prices that turn the usage table's engine rows into costs.

const usd = z.coerce.number().nonnegative();

/**
 * First path segments the app already serves (pages, calls, the live door, static files): an ADMIN_PATH among
 * them would never be reached, because Remix prefers a route's own segment to the dashboard's dynamic one.
 * config/workspace.server.test.ts derives the list from app/routes and public/, so a new route cannot be missed.
 */
export const RESERVED_SEGMENTS = [
  "api",
  "arztbriefe",
  "auth",
  "build",
  "chat",
  "druck",
  "help",
  "live",
  "locales",
  "login",
  "logout",
  "resources",
  "resume",
  "settings",
  "transcriptions",
  "verify-email",
];

export const workspaceEnvShape = {
  /** Where the admin dashboard is served; never printed in the interface. */
  ADMIN_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9][A-Za-z0-9_-]{2,62}$/, "must be one path segment like /betrieb-7f3k")
    .refine((value) => !RESERVED_SEGMENTS.includes(value.slice(1).toLowerCase()), {
      message: `must not be a path the app already serves (${RESERVED_SEGMENTS.map((s) => `/${s}`).join(", ")})`,
    })
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
  /**
   * Audio is deleted this many days after the doctor released its letter ("Freigegeben", issue 22); transcript and
   * letter stay. 0: audio is kept until the recording is deleted.
   */
  AUDIO_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  /** The transcript goes this many days after its letter was released (0: kept). */
  TRANSCRIPT_RETENTION_DAYS: z.coerce.number().int().min(0).max(36500).default(0),
  /** The letter — and with it whatever of its recording is left — goes this many days after release (0: kept). */
  LETTER_RETENTION_DAYS: z.coerce.number().int().min(0).max(36500).default(0),
  /**
   * Audit rows (who, what, outcome, client address) are deleted this many days after they were written. Unset: kept
   * for good — the operator's record-keeping duties decide (docs/data-protection.md § 3).
   */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(30).max(36500).optional(),
  /** Batch speech recognition, per minute of audio (the local engine costs nothing). */
  PRICE_SPEECH_PER_MINUTE_USD: usd.default(0),
  /** Realtime speech recognition per minute of audio; the batch price when unset. */
  PRICE_SPEECH_LIVE_PER_MINUTE_USD: usd.optional(),
  PRICE_LLM_INPUT_PER_1K_TOKENS_USD: usd.default(0),
  PRICE_LLM_OUTPUT_PER_1K_TOKENS_USD: usd.default(0),
};

type Env = z.output<z.ZodObject<typeof workspaceEnvShape>>;

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
    audioRetentionMs: env.AUDIO_RETENTION_DAYS > 0 ? env.AUDIO_RETENTION_DAYS * 86_400_000 : null,
    transcriptRetentionMs: env.TRANSCRIPT_RETENTION_DAYS > 0 ? env.TRANSCRIPT_RETENTION_DAYS * 86_400_000 : null,
    letterRetentionMs: env.LETTER_RETENTION_DAYS > 0 ? env.LETTER_RETENTION_DAYS * 86_400_000 : null,
    auditRetentionMs: env.AUDIT_RETENTION_DAYS ? env.AUDIT_RETENTION_DAYS * 86_400_000 : null,
    prices: {
      speechPerMinuteUsd: env.PRICE_SPEECH_PER_MINUTE_USD,
      speechLivePerMinuteUsd: env.PRICE_SPEECH_LIVE_PER_MINUTE_USD ?? env.PRICE_SPEECH_PER_MINUTE_USD,
      llmInputPer1kTokensUsd: env.PRICE_LLM_INPUT_PER_1K_TOKENS_USD,
      llmOutputPer1kTokensUsd: env.PRICE_LLM_OUTPUT_PER_1K_TOKENS_USD,
    },
  };
}
