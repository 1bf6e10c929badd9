import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

// COOKIE_SECRET and STORAGE_SIGNING_SECRET are rotation lists (ASVS 11.2.2): one or more secrets separated by
// commas, the first signs everything new and every one is accepted when a value comes back. Rotating means putting
// a new secret first and removing the old one once nothing signed with it is still alive (docs/data-protection.md).

/** At least one secret; the first is the one that signs. */
export type SecretList = [string, ...string[]];

export const MIN_SECRET_LENGTH = 32;

/**
 * A list of secrets from one variable: separated by commas, spaces around each ignored. Every entry must have
 * MIN_SECRET_LENGTH characters; the message names the entry by position and length, never by its value.
 */
export const secretListSetting = z
  .string()
  .optional()
  .transform((raw, ctx): SecretList | undefined => {
    if (raw === undefined) return undefined;
    const secrets = raw.split(",").map((entry) => entry.trim());
    let refused = false;
    secrets.forEach((secret, index) => {
      if (secret.length >= MIN_SECRET_LENGTH) return;
      refused = true;
      const which = secrets.length === 1 ? "the secret" : `secret ${index + 1} of ${secrets.length}`;
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `must be at least ${MIN_SECRET_LENGTH} characters (${which} has ${secret.length}); several secrets are separated by commas, the first signs`,
      });
    });
    return refused ? z.NEVER : [secrets[0]!, ...secrets.slice(1)];
  });

/** A secret that survives restarts on a development machine without asking anyone. */
export function persistedDevSecret(dataDir: string, name: string): string {
  const file = path.join(dataDir, "secrets", name);
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const secret = randomBytes(32).toString("base64url");
    fs.writeFileSync(file, secret, { mode: 0o600 });
    return secret;
  }
}

/** The development default of a rotation list: one persisted secret. */
export function persistedDevSecretList(dataDir: string, name: string): SecretList {
  return [persistedDevSecret(dataDir, name)];
}
