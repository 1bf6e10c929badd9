import type { Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database } from "~/models/schema";
import {
  countUserVocabulary,
  deleteUserVocabularyTerm,
  findUserVocabularyTerm,
  insertUserVocabularyTerm,
  listUserVocabulary,
  listUserVocabularyTerms,
  lockVocabularyOwner,
  updateUserVocabularySoundsLike,
  type VocabularyLanguage,
} from "~/models/vocabulary.server";
import { auditVocabulary } from "../audit/events.server";
import type { VocabularyEntry } from "../speech/types";
import { getVocabulary, VOCABULARY_LIMITS } from "../speech/vocabulary.server";
import { DomainError } from "../web/domain-error.server";
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

// Settings › "Mein Vokabular" (issue 24): the doctor sees the terms, removes one, or adds one by hand. A term added
// by hand has no misheard variant; it follows the rules of a corrected one (60 characters, one line, not a built-in
// term, at most 500), but is refused with a message instead of being skipped, as nothing else is saved with it.

const ERR = "account:vocabulary.errors";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type VocabularyTermView = {
  id: string;
  language: VocabularyLanguage;
  content: string;
  soundsLike: string[];
  addedAt: string;
};

/** The user's terms, each language sorted by term as the language sorts (case and accents aside). */
export async function listOwnVocabulary(userId: string) {
  const rows = await listUserVocabularyTerms({ ownerId: userId });
  const byLanguage = { de: [] as VocabularyTermView[], en: [] as VocabularyTermView[] };
  for (const row of rows) {
    byLanguage[row.language].push({
      id: row.id,
      language: row.language,
      content: row.content,
      soundsLike: [...row.sounds_like],
      addedAt: new Date(row.created_at).toISOString(),
    });
  }
  for (const language of ["de", "en"] as const) {
    const collator = new Intl.Collator(language, { sensitivity: "base" });
    byLanguage[language].sort((a, b) => collator.compare(a.content, b.content) || a.content.localeCompare(b.content));
  }
  return { terms: byLanguage, count: rows.length, max: USER_VOCABULARY_LIMITS.entries };
}

/** A term as typed: trimmed, 1–60 characters, one line, no control characters, at least one letter or digit. */
export function vocabularyTermFrom(value: unknown): string {
  const content = typeof value === "string" ? value.trim().normalize("NFC") : "";
  if (!content) throw new DomainError("invalid", `${ERR}.termRequired`);
  if (content.length > USER_VOCABULARY_LIMITS.contentMax)
    throw new DomainError("invalid", `${ERR}.termTooLong`, [], { max: String(USER_VOCABULARY_LIMITS.contentMax) });
  if (/\p{Cc}|\p{Cf}|[\u2028\u2029]/u.test(content)) throw new DomainError("invalid", `${ERR}.termInvalid`);
  if (!vocabularyKey(content)) throw new DomainError("invalid", `${ERR}.termInvalid`);
  return content;
}

export function vocabularyLanguageFrom(value: unknown): VocabularyLanguage {
  if (value !== "de" && value !== "en") throw new DomainError("invalid", `${ERR}.languageInvalid`);
  return value;
}

/**
 * Adds a term by hand, under the same lock as a correction: refused when the built-in list or the doctor's own list
 * (same language, case aside) has it, or when the list is full. Audited by the new term's id.
 */
export async function addOwnVocabularyTerm(args: {
  userId: string;
  language: VocabularyLanguage;
  content: string;
  request: Request;
}) {
  const content = vocabularyTermFrom(args.content);
  const contentKey = vocabularyKey(content);
  if (getVocabulary(args.language).some((entry) => vocabularyKey(entry.content) === contentKey))
    throw new DomainError("invalid", `${ERR}.builtIn`, [], { term: content });
  const id = await getDb()
    .transaction()
    .execute(async (trx) => {
      await lockVocabularyOwner(trx, args.userId);
      if (await findUserVocabularyTerm(trx, { ownerId: args.userId, language: args.language, contentKey }))
        throw new DomainError("invalid", `${ERR}.exists`, [], { term: content });
      if ((await countUserVocabulary(trx, args.userId)) >= USER_VOCABULARY_LIMITS.entries)
        throw new DomainError("conflict", `${ERR}.full`, [], { max: String(USER_VOCABULARY_LIMITS.entries) });
      return insertUserVocabularyTerm(trx, {
        ownerId: args.userId,
        language: args.language,
        content,
        contentKey,
        soundsLike: [],
      });
    });
  await auditVocabulary(args.request, args.userId, "vocabulary.add", id);
  return { id, content };
}

/** Removes one of the user's terms: its text, or a not_found DomainError for any id that is not theirs. */
export async function removeOwnVocabularyTerm(args: { userId: string; id: string; request: Request }) {
  const content = UUID.test(args.id)
    ? await deleteUserVocabularyTerm({ ownerId: args.userId, id: args.id })
    : undefined;
  if (content === undefined) throw new DomainError("not_found", `${ERR}.notFound`);
  await auditVocabulary(args.request, args.userId, "vocabulary.remove", args.id);
  return content;
}
