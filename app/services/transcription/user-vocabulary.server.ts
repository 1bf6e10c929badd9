import type { Transaction } from "kysely";
import type { Database } from "~/models/schema";
import {
  countUserVocabulary,
  findUserVocabularyTerm,
  insertUserVocabularyTerm,
  listUserVocabulary,
  lockVocabularyOwner,
  updateUserVocabularySoundsLike,
  type VocabularyLanguage,
} from "~/models/vocabulary.server";
import type { VocabularyEntry } from "../speech/types";
import { getVocabulary, VOCABULARY_LIMITS } from "../speech/vocabulary.server";
import { vocabularyKey } from "./corrections";

// The doctor's own vocabulary (issue 24, ADR 0031): a term a transcript was corrected to joins it, with what the
// engine had heard instead as a misheard variant, and every speech engine — the transcription job, live sessions,
// the direct live start — receives it together with the built-in list. Its known risk, that an engine told a term
// "hears" it in silence, is met in the review (corrections.ts reviewItems), not here.

export const USER_VOCABULARY_LIMITS = {
  entries: 500,
  contentMax: VOCABULARY_LIMITS.contentMax,
  soundsLikePerEntry: VOCABULARY_LIMITS.soundsLikePerEntry,
} as const;

export type VocabularyOutcome = "added" | "updated" | "known" | "full";

export function vocabularyLanguage(languageCode: string): VocabularyLanguage {
  return languageCode.startsWith("en") ? "en" : "de";
}

/**
 * Adds a corrected term (inside the correction's transaction, so a correction and its term are saved together).
 * A term of the built-in list is "known"; one the doctor has already gains the misheard form; a new one is added
 * while the doctor has fewer than 500 ("full" otherwise: the correction itself is saved all the same).
 */
export async function addVocabularyTerm(
  trx: Transaction<Database>,
  args: { userId: string; language: VocabularyLanguage; content: string; heard: string },
): Promise<VocabularyOutcome> {
  const content = args.content.trim();
  const contentKey = vocabularyKey(content);
  if (!contentKey || content.length > USER_VOCABULARY_LIMITS.contentMax) return "known";
  if (getVocabulary(args.language).some((entry) => vocabularyKey(entry.content) === contentKey)) return "known";
  const heard = args.heard.trim().slice(0, VOCABULARY_LIMITS.soundsLikeMax);
  const misheard = heard && vocabularyKey(heard) !== contentKey ? [heard] : [];
  await lockVocabularyOwner(trx, args.userId);
  const existing = await findUserVocabularyTerm(trx, { ownerId: args.userId, language: args.language, contentKey });
  if (existing) {
    const soundsLike = [...new Set([...existing.sounds_like, ...misheard])].slice(
      0,
      USER_VOCABULARY_LIMITS.soundsLikePerEntry,
    );
    if (soundsLike.length === existing.sounds_like.length) return "known";
    await updateUserVocabularySoundsLike(trx, { ownerId: args.userId, id: existing.id, soundsLike });
    return "updated";
  }
  if ((await countUserVocabulary(trx, args.userId)) >= USER_VOCABULARY_LIMITS.entries) return "full";
  await insertUserVocabularyTerm(trx, {
    ownerId: args.userId,
    language: args.language,
    content,
    contentKey,
    soundsLike: misheard,
  });
  return "added";
}

/**
 * What a speech engine receives for one user and language: the doctor's own terms first (most recently corrected
 * first — a Whisper-style prompt keeps only the first few dozen, and a doctor's own terms are the ones the engine
 * got wrong before), then the built-in list, each term once.
 */
export async function engineVocabulary(args: { userId: string; language: VocabularyLanguage }) {
  const own = await listUserVocabulary({ ownerId: args.userId, language: args.language });
  const entries: VocabularyEntry[] = own.map((term) => ({
    content: term.content,
    ...(term.sounds_like.length > 0 ? { sounds_like: [...term.sounds_like] } : {}),
  }));
  const seen = new Set(entries.map((entry) => vocabularyKey(entry.content)));
  for (const entry of getVocabulary(args.language)) {
    if (!seen.has(vocabularyKey(entry.content))) entries.push(entry);
  }
  return entries;
}

/** Every vocabulary term the engine was given for this user and language, as the review compares words. */
export async function vocabularyKeys(args: { userId: string; language: VocabularyLanguage }) {
  return new Set((await engineVocabulary(args)).map((entry) => vocabularyKey(entry.content)));
}
