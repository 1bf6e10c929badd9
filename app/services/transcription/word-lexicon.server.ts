import { getVocabulary } from "../speech/vocabulary.server";
import { vocabularyKey } from "./corrections";

// Which words a lexicon knows (issue 24: the review steps through "the words no lexicon knows"). A speech engine
// that mishears a rare term often writes a word no language has — "Metoprolool", "Ramipill" — with full confidence,
// so confidence alone does not find it. The lexicon is a general word list of the language (the German and English
// Wikipedia and subtitle frequency lists with first and last names that zxcvbn-ts ships, MIT; ADR 0031 says why these
// and not a spelling dictionary) with the built-in medical vocabulary; a German compound counts as known when it
// splits into known words ("Brust|schmerzen", "Belastung|s|dyspnoe"). The doctor's own vocabulary is added by the
// caller. Loaded on the first review of a language (a few hundred milliseconds, ~10 MiB), then kept.

export type LexiconLanguage = "de" | "en";

/** Shorter words are left alone: "Hb", "re", "OP" are abbreviations or fragments, not misheard terms. */
const MIN_LETTERS = 4;
/** A compound's parts are at least this long, and there are at most this many. */
const MIN_PART = 3;
const MAX_PARTS = 4;
/** Linking elements between a German compound's parts ("Belastung-s-dyspnoe", "Nerve-n-schmerz"). */
const LINKS = ["s", "n", "en", "es", "e"];

/**
 * Words of prescriptions and dosage forms that general word lists lack ("Metoprolol retard", "Voltaren forte") — the
 * everyday words of a consultation about medication, which must not read as misheard.
 */
const CLINICAL_WORDS = {
  de: "retard forte mite depot comp akut zäpfchen dragee dragees brausetablette brausetabletten retardtablette retardtabletten filmtablette filmtabletten hartkapsel hartkapseln weichkapsel weichkapseln tropfen lösung suspension salbe creme inhalat dosieraerosol pflaster spritze fertigspritze",
  en: "retard forte mite depot tablet tablets capsule capsules inhaler suppository suppositories sachet sachets",
} as const;

const lexicons = new Map<LexiconLanguage, Promise<Set<string>>>();

async function wordList(language: LexiconLanguage): Promise<string[]> {
  if (language === "de") {
    const { dictionary } = await import("@zxcvbn-ts/language-de");
    return [dictionary.commonWords, dictionary.wikipedia, dictionary.firstnames, dictionary.lastnames].flat();
  }
  const { dictionary } = await import("@zxcvbn-ts/language-en");
  return [
    dictionary["commonWords-en"],
    dictionary["wikipedia-en"],
    dictionary["firstnames-en"],
    dictionary["lastnames-en"],
  ].flat();
}

function load(language: LexiconLanguage) {
  let lexicon = lexicons.get(language);
  if (!lexicon) {
    lexicon = wordList(language).then((words) => {
      const known = new Set<string>();
      for (const word of [...words, ...CLINICAL_WORDS[language].split(" ")]) known.add(vocabularyKey(String(word)));
      for (const entry of getVocabulary(language))
        for (const part of entry.content.split(/[\s-]+/)) known.add(vocabularyKey(part));
      return known;
    });
    lexicons.set(language, lexicon);
    // A failed load is tried again by the next review rather than remembered.
    lexicon.catch(() => lexicons.delete(language));
  }
  return lexicon;
}

function splits(word: string, known: Set<string>, parts: number): boolean {
  if (known.has(word)) return true;
  if (parts >= MAX_PARTS) return false;
  for (let i = MIN_PART; i <= word.length - MIN_PART; i++) {
    if (!known.has(word.slice(0, i))) continue;
    const rest = word.slice(i);
    if (splits(rest, known, parts + 1)) return true;
    for (const link of LINKS)
      if (
        rest.startsWith(link) &&
        rest.length - link.length >= MIN_PART &&
        splits(rest.slice(link.length), known, parts + 1)
      )
        return true;
  }
  return false;
}

/**
 * A test of whether a word (as vocabularyKey gives it) is one the language knows. Short words, words with digits and
 * abbreviations written in capitals ("EKG", "COPD") always count as known; hyphenated words count when every part
 * does.
 */
export async function wordKnower(language: LexiconLanguage): Promise<(text: string) => boolean> {
  const known = await load(language);
  const seen = new Map<string, boolean>();
  return (text: string) => {
    const bare = text.trim().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
    if (bare.length < MIN_LETTERS || /\d/.test(bare) || (bare === bare.toUpperCase() && bare.length <= 6)) return true;
    // English clitics and the German apostrophe ("it's", "don't", "geht's") are the word they hang on.
    const key = vocabularyKey(bare.replace(/[’]/g, "'")).replace(/n't$|'(s|re|ve|ll|m|d)$/, "");
    let answer = seen.get(key);
    if (answer === undefined) {
      // English writes its compounds apart or with a hyphen: only German words are split.
      answer = key
        .split("-")
        .every((part) => part.length < MIN_LETTERS || (language === "de" ? splits(part, known, 1) : known.has(part)));
      seen.set(key, answer);
    }
    return answer;
  };
}
