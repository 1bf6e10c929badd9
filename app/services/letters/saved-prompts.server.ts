import {
  countSavedPrompts,
  deleteSavedPrompt,
  insertSavedPrompt,
  listSavedPrompts,
  lockUser,
} from "~/models/saved-prompt.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { MAX_INSTRUCTION_CHARS } from "./refine.server";

// Saved refinement prompts (SPEC §3 "Saved prompt", §5): at most 3 per user, title ≤ 40 characters, text
// required (≤ the 500 characters an instruction may have). The count is checked under a lock on the user's
// row, so two tabs cannot both save the third.

export const MAX_PROMPTS = 3;
export const MAX_PROMPT_TITLE = 40;

export async function listPrompts({ userId }: { userId: string }) {
  const rows = await listSavedPrompts({ ownerId: userId });
  return rows.map((r) => ({ id: r.id, title: r.title, prompt_text: r.prompt_text }));
}

/**
 * A prompt's title as the doors read it, before its text: trimmed, required, at most 40 characters. The JSON call
 * refuses another type than text with the same "required" message first.
 */
export function promptTitleFrom(value: string) {
  const title = value.trim();
  if (!title)
    throw new DomainError("invalid", "letters:prompts.titleRequired", [
      { path: ["title"], message: "letters:prompts.titleRequired" },
    ]);
  if (title.length > MAX_PROMPT_TITLE) {
    throw new DomainError("invalid", "letters:prompts.titleTooLong", [
      { path: ["title"], message: "letters:prompts.titleTooLong" },
    ]);
  }
  return title;
}

/** A prompt's text, after its title: trimmed, required, at most the 500 characters of an instruction. */
export function promptTextFrom(value: string) {
  const promptText = value.trim();
  if (!promptText) {
    throw new DomainError("invalid", "letters:prompts.textRequired", [
      { path: ["prompt_text"], message: "letters:prompts.textRequired" },
    ]);
  }
  if (promptText.length > MAX_INSTRUCTION_CHARS) {
    throw new DomainError("invalid", "letters:errors.instructionTooLong", [
      { path: ["prompt_text"], message: "letters:errors.instructionTooLong" },
    ]);
  }
  return promptText;
}

/** A new prompt, its title and text checked at the door (promptTitleFrom, promptTextFrom); at most 3 per user. */
export async function savePrompt(args: { userId: string; title: string; promptText: string }) {
  const { title, promptText } = args;
  return getDb()
    .transaction()
    .execute(async (trx) => {
      await lockUser(trx, args.userId);
      if ((await countSavedPrompts(trx, args.userId)) >= MAX_PROMPTS) {
        throw new DomainError("conflict", "letters:prompts.limitReached");
      }
      const row = await insertSavedPrompt(trx, { ownerId: args.userId, title, promptText });
      return { id: row.id, title: row.title, prompt_text: row.prompt_text };
    });
}

export async function removePrompt(args: { userId: string; id: string }) {
  // Not an id at all is a prompt that does not exist.
  if (!/^[0-9a-f-]{36}$/i.test(args.id)) {
    throw new DomainError("not_found", "letters:prompts.notFound");
  }
  const deleted = await deleteSavedPrompt({ ownerId: args.userId, id: args.id });
  if (!deleted) throw new DomainError("not_found", "letters:prompts.notFound");
  return { success: true as const };
}
