import { statusFor } from "./domain-error.server";

// A service the app stands on is down or unreachable — the database, object storage. That is neither the user's
// fault nor a bug in the request: it answers 503 "temporarily unavailable" (the error page, the JSON API's
// {"detail"}), changes nothing, and the same request works again once the service is back.

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);
// A server whose certificate cannot be trusted (expired, self-signed, wrong name, unknown issuer) is as unreachable
// as one that is down: nothing was sent to it (tests/integration/outbound-tls.test.ts), and the operator must act.
const CERTIFICATE_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);
// PostgreSQL's SQLSTATEs: connection exceptions (class 08), a server shutting down or starting up (57P01–57P03),
// no connection slot left (53300).
const POSTGRES_CODES = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
// node-postgres reports a lost or refused connection by message only.
const POSTGRES_MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/, /not queryable/];

export function isServiceUnavailable(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 3) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (NETWORK_CODES.has(code) || CERTIFICATE_CODES.has(code) || POSTGRES_CODES.test(code)))
    return true;
  // An S3-compatible store (or the gateway in front of it) that answers but cannot serve.
  const status = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
  if (status === 502 || status === 503 || status === 504) return true;
  if (POSTGRES_MESSAGES.some((pattern) => pattern.test(error.message))) return true;
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.every((inner) => isServiceUnavailable(inner, depth + 1));
  }
  return isServiceUnavailable(error.cause, depth + 1);
}

export const RETRY_AFTER_SECONDS = 30;

/** The thrown response of a page or form whose database went away: the error page says so, translated. */
export function serviceUnavailableResponse() {
  return new Response("Service temporarily unavailable", {
    status: statusFor("service_down"),
    headers: { "Retry-After": String(RETRY_AFTER_SECONDS), "Cache-Control": "no-store" },
  });
}

/** For a loader's `.catch`: a service that is down becomes the 503 page; anything else stays what it was. */
export function rethrowAsUnavailable(error: unknown): never {
  if (isServiceUnavailable(error)) throw serviceUnavailableResponse();
  throw error;
}
