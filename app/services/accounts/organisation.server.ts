import { getConfig } from "../config/config.server";

// Who an address belongs to, decided on the server from the verified identity: the operator's admins (the admin
// dashboard, SPEC §6) and organisation accounts (SPEC §3 "Usage dashboard user" is_org). Domains are compared
// exactly, never by suffix or substring: a look-alike (skribent.example.evil.com, evilskribent.example) or a
// subdomain (sub.skribent.example) is another domain.

const DNS_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * The lower-cased domain of an address with exactly one "@" and a plain DNS name after it; otherwise null. Domain
 * names are case-insensitive, so ADMIN@SKRIBENT.EXAMPLE is in skribent.example; anything that is not ASCII letters,
 * digits, hyphens and dots (a homoglyph, a trailing dot, a space, a second "@") is no domain at all.
 */
export function emailDomainOf(email: string | null | undefined): string | null {
  if (typeof email !== "string") return null;
  const parts = email.split("@");
  if (parts.length !== 2 || parts[0].length === 0) return null;
  const domain = parts[1].toLowerCase();
  return DNS_NAME.test(domain) ? domain : null;
}

/** An identity-provider claim (OIDC_ORG_CLAIM) read from a token: true/false (or "true"/"false"), else unknown. */
export function orgClaimOf(claims: Record<string, unknown>, claim = getConfig().organisations.claim): boolean | null {
  if (!claim) return null;
  const value = claims[claim];
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  return null;
}

/**
 * SPEC §3 is_org: the configured claim said so at the last sign-in, or the verified address is in one of the
 * configured organisation domains (ORG_EMAIL_DOMAINS). Read at the time of asking, so a changed list applies at once.
 */
export function isOrgAccount(user: { email: string | null; emailVerified: boolean; orgClaim: boolean | null }) {
  if (user.orgClaim === true) return true;
  const domain = user.emailVerified ? emailDomainOf(user.email) : null;
  return domain !== null && getConfig().organisations.emailDomains.includes(domain);
}
