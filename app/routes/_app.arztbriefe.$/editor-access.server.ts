import { hideAsNotFound } from "~/services/web/not-found.server";
import type { getLetter } from "~/services/letters/editing.server";

// The letter the editor's loader and action work on, and how they refuse one that is not the user's.

export type Letter = Awaited<ReturnType<typeof getLetter>>;

export const LANGUAGE_MISSING = "letters:errors.languageMissing";
/** A letter that is not this user's (or not there) is a 404; nothing says whether it exists. */
const HIDDEN = new Set(["letters:errors.letterNotFound", "letters:errors.letterKeyRequired", LANGUAGE_MISSING]);

/** The editor's policy for web/not-found.server's `hideAsNotFound`: which of getLetter's refusals are a 404. */
export function notFound(error: unknown): never {
  return hideAsNotFound(error, { messages: HIDDEN });
}
