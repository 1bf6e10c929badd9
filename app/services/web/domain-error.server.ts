// Expected failures of a use case, mapped to HTTP in one place (STYLE.md §9).
// `message` is an i18n key; `issues` carry field paths for forms.

export type DomainErrorKind = "not_found" | "invalid" | "forbidden" | "conflict" | "rate_limited" | "unavailable";
export type DomainIssue = { path: (string | number)[]; message: string };

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly issues: DomainIssue[] = [],
    readonly values: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * A failure that is no DomainError because no use case decides it: a service this server stands on is not there —
 * the database or object storage is down (unavailable.server's isServiceUnavailable), or the engine a live call
 * exists for is not set up or not ready yet.
 */
export type OutageKind = "service_down";
export type FailureKind = DomainErrorKind | OutageKind;

/*
 * The one mapping from an expected failure to an HTTP status (STYLE.md §9, issue 23); every door — pages, forms,
 * the JSON API, live sessions — asks it rather than writing a number. Two ways of "could not answer" stay apart,
 * because a client reacts to them differently:
 *  - `unavailable` → 502 Bad Gateway: a service we called for this request — a language or speech engine, the
 *    patient-record system, the virus scanner — failed, refused us or answered something unusable. Nothing the
 *    user sent was wrong; the message names what failed.
 *  - `service_down` → 503 Service Unavailable (with Retry-After where it is answered): our own database or storage
 *    is unreachable, or the engine is not there yet. The request changed nothing and works again, unchanged, later.
 */
const STATUS = {
  not_found: 404,
  invalid: 400,
  forbidden: 403,
  conflict: 409,
  rate_limited: 429,
  unavailable: 502,
  service_down: 503,
} as const satisfies Record<FailureKind, number>;

export function statusFor(kind: FailureKind) {
  return STATUS[kind];
}
