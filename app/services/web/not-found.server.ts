import { DomainError, type DomainErrorKind } from "~/services/web/domain-error.server";

// The one page 404 (issue 9, STYLE.md §4): anything that is not the caller's — another user's, made up, gone — gets
// the same bare answer, so nothing says whether it exists. The JSON API answers its own shape (apiErrorResponse).

/** Throws the bare 404 the error boundary renders as "not found". */
export function notFound(): never {
  throw new Response("Not found", { status: 404 });
}

/** What, besides a `not_found` DomainError, a caller hides as a 404: further kinds, or i18n keys (messages). */
export type Hidden = { kinds?: readonly DomainErrorKind[]; messages?: ReadonlySet<string> | readonly string[] };

/**
 * For `.catch(hideAsNotFound)` and catch blocks: a DomainError that says the thing is not there (or one the caller
 * names in `hidden`) becomes the 404; anything else is rethrown unchanged.
 */
export function hideAsNotFound(error: unknown, hidden: Hidden = {}): never {
  if (error instanceof DomainError && isHidden(error, hidden)) notFound();
  throw error;
}

function isHidden(error: DomainError, { kinds = [], messages = [] }: Hidden) {
  if (error.kind === "not_found" || kinds.includes(error.kind)) return true;
  return messages instanceof Set
    ? messages.has(error.message)
    : (messages as readonly string[]).includes(error.message);
}
