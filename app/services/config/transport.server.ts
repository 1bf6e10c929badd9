// ASVS 5.0 12.3.1: in production every connection the app opens is encrypted. A URL the app calls — the identity
// provider, the object store, the patient-record system, the speech and language engines — must be https (wss for
// the live engine), and a PostgreSQL server must be asked for TLS with a verified certificate (node-postgres
// verifies the chain and the name for sslmode=require, verify-ca and verify-full alike). Plain connections stay
// allowed to this machine: a trial, an engine or database on loopback, the scale-out proof. Development and the
// tests are not affected.
import { z } from "zod";
import { syslogUrlProblem } from "../../../server/log-ship.mjs";

/** Loopback names: plain http to them never leaves the machine. */
export function isLoopbackHost(hostname: string) {
  return ["localhost", "127.0.0.1", "[::1]", "::1"].includes(hostname);
}

/** The URLs the server calls (or, for S3_PUBLIC_ENDPOINT and API_URL, hands to browsers and clients). */
export const OUTBOUND_URLS = [
  "API_URL",
  "OIDC_ISSUER",
  "S3_ENDPOINT",
  "S3_PUBLIC_ENDPOINT",
  "MFILES_BASE_URL",
  "SPEECHMATICS_BATCH_URL",
  "SPEECHMATICS_RT_URL",
  "SPEECHMATICS_MP_URL",
  "OPENAI_TRANSCRIBE_URL",
  "LLM_OPENAI_URL",
] as const;

const ENCRYPTED = new Set(["https:", "wss:"]);
const VERIFIED_SSLMODES = new Set(["require", "verify-ca", "verify-full"]);

/** What a production configuration gets wrong about encryption in transit: [variable, message] pairs. */
export function transportIssues(env: Partial<Record<(typeof OUTBOUND_URLS)[number] | "DATABASE_URL", string>>) {
  const issues: Array<[string, string]> = [];
  for (const name of OUTBOUND_URLS) {
    const value = env[name];
    if (!value) continue;
    const url = new URL(value);
    if (!ENCRYPTED.has(url.protocol) && !isLoopbackHost(url.hostname))
      issues.push([name, "must be https (wss) in production (plain http only for localhost)"]);
  }
  if (env.DATABASE_URL) {
    const url = new URL(env.DATABASE_URL);
    // A Unix socket (no host, or ?host=/path) never leaves the machine either.
    const socket = url.hostname === "" || (url.searchParams.get("host") ?? "").startsWith("/");
    const sslmode = url.searchParams.get("sslmode");
    if (!socket && !isLoopbackHost(url.hostname) && !(sslmode && VERIFIED_SSLMODES.has(sslmode)))
      issues.push([
        "DATABASE_URL",
        "must ask for TLS in production: add sslmode=verify-full (or require, verify-ca; plain only for localhost)",
      ]);
  }
  return issues;
}

/**
 * LOG_SYSLOG_URL, read by server/log-ship.mjs before the configuration is (server/index.mjs, the worker), and checked the
 * same way here: tls:// in every environment, tcp:// only to localhost (ASVS 16.4.3, ADR 0023).
 */
export const syslogUrlSetting = z
  .string()
  .optional()
  .superRefine((value, ctx) => {
    const problem = value === undefined ? undefined : syslogUrlProblem(value);
    if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
  });
