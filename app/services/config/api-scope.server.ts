import { z } from "zod";

// OIDC_API_SCOPE (ASVS 10.3.2; ADR 0021): the scope an access token must have been granted to open the JSON API,
// as the provider writes it into the token. Unset, any access token for OIDC_AUDIENCE opens it, as before.

/**
 * One scope-token of RFC 6749 §3.3: printable ASCII without the space that separates scopes, the double quote and
 * the backslash. RFC 6750 §3 allows the same characters in the challenge's `scope` attribute, so the value goes into
 * the WWW-Authenticate header of a refusal as it is, and into a log line without escaping.
 */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

const EXPECTED =
  "expected the one scope your identity provider puts into access tokens for this API, as it appears in the " +
  "token (e.g. skribent.api)";

export const apiScopeSetting = z
  .string()
  .optional()
  .transform((raw, ctx): string | null => {
    if (raw === undefined) return null;
    const value = raw.trim();
    if (SCOPE_TOKEN.test(value)) return value;
    const shown = JSON.stringify(value);
    const problem =
      value === ""
        ? "is empty"
        : /\s/.test(value)
          ? `(${shown}) holds a space: name one scope, not a list`
          : `(${shown}) has a character a scope cannot hold (a quote, a backslash, a control or non-ASCII character)`;
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: `the value ${problem}; ${EXPECTED}` });
    return z.NEVER;
  });
