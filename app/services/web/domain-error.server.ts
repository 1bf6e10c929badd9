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

export function statusFor(kind: DomainErrorKind) {
  return { not_found: 404, invalid: 400, forbidden: 403, conflict: 409, rate_limited: 429, unavailable: 502 }[kind];
}
