import { DomainError } from "~/services/web/domain-error.server";
import type { getLetter } from "~/services/letters/editing.server";

// The letter the editor's loader and action work on, and how they refuse one that is not the user's.

export type Letter = Awaited<ReturnType<typeof getLetter>>;

export const LANGUAGE_MISSING = "letters:errors.languageMissing";
/** A letter that is not this user's (or not there) is a 404; nothing says whether it exists. */
const HIDDEN = new Set(["letters:errors.letterNotFound", "letters:errors.letterKeyRequired", LANGUAGE_MISSING]);

export function notFound(error: unknown): never {
  if (error instanceof DomainError && (HIDDEN.has(error.message) || error.kind === "not_found")) {
    throw new Response("Not found", { status: 404 });
  }
  throw error;
}
