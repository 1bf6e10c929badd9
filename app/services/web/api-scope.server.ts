import type { JWTPayload } from "jose";
import { getConfig } from "../config/config.server";

// The delegated authorization a bearer token must show (OIDC_API_SCOPE, ADR 0021), checked by verifyAccessToken in
// web/auth.server.ts after the signature, issuer, audience, lifetime and the authentication strength.

/**
 * A genuine access token for this API whose client was not granted OIDC_API_SCOPE. The user may well be allowed in;
 * this client was not given the right to act for them here.
 */
export class InsufficientScopeError extends Error {
  constructor(
    readonly identity: { issuer: string; subject: string },
    readonly scope: string,
  ) {
    super("the access token was not granted OIDC_API_SCOPE");
  }
}

/**
 * The scopes a token was granted. RFC 9068 §2.2.3 puts them in `scope`, space-separated (Keycloak, Auth0); Okta
 * writes `scp` as an array and Microsoft Entra ID `scp` as a space-separated string. Either claim counts in either
 * form; a scope is only ever compared whole, so `skribent.api.read` is not `skribent.api`.
 */
export function grantedScopes(payload: JWTPayload): Set<string> {
  const granted = new Set<string>();
  for (const claim of [payload.scope, payload.scp]) {
    if (typeof claim === "string") for (const scope of claim.split(" ")) granted.add(scope);
    if (Array.isArray(claim)) for (const scope of claim) if (typeof scope === "string") granted.add(scope);
  }
  granted.delete("");
  return granted;
}

/** OIDC_API_SCOPE set: the token must have been granted it. A token that names no scope at all has not been. */
export function requireApiScope(payload: JWTPayload, identity: { issuer: string; subject: string }) {
  const required = getConfig().oidc.apiScope;
  if (!required || grantedScopes(payload).has(required)) return;
  throw new InsufficientScopeError({ issuer: identity.issuer, subject: identity.subject }, required);
}
