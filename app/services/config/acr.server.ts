import { z } from "zod";

// OIDC_ACR_VALUES (ASVS 6.3.3, 6.8.4, 10.3.4; ADR 0019): the authentication context classes a sign-in must have
// reached at the identity provider, e.g. its multi-factor level. Unset, nothing is asked for and nothing checked.
// The values are the provider's own names; Skribent only compares them, so they are checked for their shape alone.

/** At least one accepted `acr` value, in the order of preference sent to the provider. */
export type AcrValues = [string, ...string[]];

/**
 * The authorization request sends the values space-separated (OIDC Core §3.1.2.1), so a value can hold neither
 * a space nor the comma that separates them here; printable ASCII without quote and backslash, as OAuth's own
 * tokens (RFC 6749 §A.4), leaves every name providers use (`mfa`, `2`, URNs, URLs) and nothing that would need
 * escaping in a log line or a challenge header.
 */
const ACR_VALUE = /^[\x21\x23-\x2B\x2D-\x5B\x5D-\x7E]+$/;

const EXPECTED =
  "expected the acr values your identity provider names, separated by commas (e.g. mfa or " +
  "http://schemas.openid.net/pape/policies/2007/06/multi-factor)";

export const acrValuesSetting = z
  .string()
  .optional()
  .transform((raw, ctx): AcrValues | null => {
    if (raw === undefined) return null;
    const values = raw.split(",").map((entry) => entry.trim());
    let refused = false;
    values.forEach((value, index) => {
      if (ACR_VALUE.test(value)) return;
      refused = true;
      const which = values.length === 1 ? "the value" : `value ${index + 1} of ${values.length}`;
      const problem = value === "" ? "is empty" : `(${JSON.stringify(value)}) has a space or a character not allowed`;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `${which} ${problem}; ${EXPECTED}` });
    });
    if (refused) return z.NEVER;
    const unique = [...new Set(values)];
    return [unique[0]!, ...unique.slice(1)];
  });
