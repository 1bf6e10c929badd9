import type { JWTPayload } from "jose";
import { getConfig } from "../config/config.server";

// The authentication strength a sign-in or an API token must show (OIDC_ACR_VALUES, ADR 0019), checked by
// web/auth.server.ts after the signature, issuer, audience, lifetime and nonce.

/**
 * A genuine token of the configured provider, for this sign-in or this API, whose sign-in did not reach a level
 * OIDC_ACR_VALUES accepts (ADR 0019). The message is for the log; users are told only that the sign-in was too weak.
 */
export class AuthenticationStrengthError extends Error {
  constructor(
    readonly identity: { issuer: string; subject: string },
    acr: unknown,
  ) {
    super(
      acr === undefined
        ? "the token has no acr claim, OIDC_ACR_VALUES asks for one"
        : typeof acr === "string"
          ? `acr ${JSON.stringify(acr.slice(0, 100))} is not one of OIDC_ACR_VALUES`
          : "the token's acr claim is not a string",
    );
  }
}

/**
 * OIDC_ACR_VALUES set: the token's `acr` must be one of them. A token without `acr` is refused too — a provider
 * that does not say how the user signed in has not said it was strong enough.
 */
export function requireAcceptedAcr(payload: JWTPayload, identity: { issuer: string; subject: string }) {
  const accepted = getConfig().oidc.acrValues;
  if (!accepted) return;
  if (typeof payload.acr === "string" && accepted.includes(payload.acr)) return;
  throw new AuthenticationStrengthError({ issuer: identity.issuer, subject: identity.subject }, payload.acr);
}
