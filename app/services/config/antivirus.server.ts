import { z } from "zod";
import { clamdTarget, clamdUrlProblem } from "../antivirus/clamd.server";

// The antivirus part of the configuration (ASVS 5.0 5.4.3, ADR 0024): the clamd every upload is scanned by before
// it is checked, stored or read. Production names one or says "none" on purpose; elsewhere unset means no scanning.

export const antivirusEnvShape = {
  ANTIVIRUS_URL: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      const problem = value === undefined || value === "none" ? undefined : clamdUrlProblem(value);
      if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
    }),
  ANTIVIRUS_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(60),
};

type AntivirusEnv = { APP_ENV: string; ANTIVIRUS_URL?: string; ANTIVIRUS_TIMEOUT_SECONDS: number };

export function antivirusIssues(env: AntivirusEnv): Array<[string, string]> {
  if (env.APP_ENV === "production" && !env.ANTIVIRUS_URL)
    return [["ANTIVIRUS_URL", "is required in production (a clamd to scan uploads, or none to run without one)"]];
  return [];
}

export function antivirusConfig(env: AntivirusEnv) {
  const url = env.ANTIVIRUS_URL && env.ANTIVIRUS_URL !== "none" ? env.ANTIVIRUS_URL : null;
  return { url, target: url ? clamdTarget(url) : null, timeoutMs: env.ANTIVIRUS_TIMEOUT_SECONDS * 1000 };
}
