import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { VocabularyEntry } from "./types";

// The built-in custom vocabulary (SPEC: "a large built-in list of German cardiology and urology terms with
// misheard variants") is data, not code: clinicians' terms are edited in app/data/vocabulary/de-medical.json.
// It is read and validated once, at first use, and fails loudly on any defect. Every engine that can use it
// gets it: Speechmatics as `additional_vocab` (content + sounds_like), a Whisper-style engine as an initial
// prompt (`whisperPrompt`).

export const VOCABULARY_FILE = path.resolve(process.cwd(), "app/data/vocabulary/de-medical.json");

export const VOCABULARY_LIMITS = { contentMax: 60, soundsLikeMax: 60, soundsLikePerEntry: 3 } as const;

export const vocabularyDomains = ["cardiology", "urology"] as const;
export type VocabularyDomain = (typeof vocabularyDomains)[number];

const trimmed = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => value === value.trim(), "must not start or end with white space");

const entrySchema = z
  .object({
    content: trimmed(VOCABULARY_LIMITS.contentMax),
    sounds_like: z.array(trimmed(VOCABULARY_LIMITS.soundsLikeMax)).min(1).max(VOCABULARY_LIMITS.soundsLikePerEntry),
    domain: z.enum(vocabularyDomains),
  })
  .strict();

const fileSchema = z
  .object({
    version: z.literal(1),
    language: z.literal("de"),
    entries: z.array(entrySchema).min(1),
  })
  .strict()
  .superRefine((file, ctx) => {
    const seen = new Map<string, number>();
    file.entries.forEach((entry, index) => {
      const key = entry.content.toLocaleLowerCase("de");
      const first = seen.get(key);
      if (first === undefined) seen.set(key, index);
      else {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["entries", index, "content"],
          message: `duplicate of entries[${first}] ("${entry.content}")`,
        });
      }
    });
  });

export type VocabularyFile = z.infer<typeof fileSchema>;
export type VocabularyFileEntry = VocabularyFile["entries"][number];

/**
 * Reads and validates a vocabulary file. Throws an Error naming the file and the problem.
 * Exported for tests; the application uses the cached `getVocabulary()`.
 */
export function readVocabularyFile(file: string = VOCABULARY_FILE): VocabularyFile {
  const name = path.basename(file);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`Vocabulary ${name}: cannot read: ${(error as Error).message}`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(file)"}: ${issue.message}`);
    throw new Error(`Vocabulary ${name}: ${issues.join("; ")}`);
  }
  return parsed.data;
}

let cached: VocabularyEntry[] | undefined;

function germanEntries(): VocabularyEntry[] {
  if (cached) return cached;
  const { entries } = readVocabularyFile();
  // Speechmatics ignores the order, but a Whisper prompt only holds the first few dozen terms: taking the
  // specialties in turn (first cardiology term, first urology term, second of each, …) keeps either one from
  // crowding the other out of the prompt. Within a specialty the file lists the most common terms first.
  const byDomain = vocabularyDomains.map((domain) => entries.filter((entry) => entry.domain === domain));
  const longest = Math.max(...byDomain.map((list) => list.length));
  const ordered: VocabularyEntry[] = [];
  for (let i = 0; i < longest; i++) {
    for (const list of byDomain) {
      const entry = list[i];
      if (entry) ordered.push({ content: entry.content, sounds_like: [...entry.sounds_like] });
    }
  }
  cached = ordered;
  return cached;
}

/**
 * The built-in vocabulary for a transcription language, without the `domain` field (engines do not take it).
 *
 * "en" gets an empty list on purpose: the terms are German spellings (Kardiomyopathie, Zystoskopie,
 * Acetylsalicylsäure) and the sounds_like hints are German pronunciations, so handing them to an English
 * recogniser would pull English speech towards German spellings rather than help. English clinical terms
 * are well covered by the engines' own models; an English list, if wanted, is a separate data file.
 */
export function getVocabulary(language: "de" | "en"): VocabularyEntry[] {
  if (language === "en") return [];
  // Copies, so an engine that edits its request cannot change what the next job gets.
  return germanEntries().map((entry) => ({
    content: entry.content,
    ...(entry.sounds_like ? { sounds_like: [...entry.sounds_like] } : {}),
  }));
}

/**
 * Whisper reads at most 224 tokens of prompt (half its 448-token text window) and keeps the *last* ones, so
 * a longer prompt silently loses its first terms. German clinical compounds cost far more than one token
 * per word (roughly 2.5–3 characters per token in Whisper's multilingual BPE), so besides the word budget
 * the prompt is also held to a character budget that stays under 224 tokens.
 */
export const WHISPER_PROMPT_MAX_CHARS = 500;

/**
 * The terms joined with ", ", in the given order, for a Whisper initial prompt. Stops before the first term
 * that would exceed `maxWords` words (white-space separated) or `maxChars` characters; a term is never cut.
 */
export function whisperPrompt(
  entries: VocabularyEntry[],
  maxWords = 180,
  maxChars: number = WHISPER_PROMPT_MAX_CHARS,
): string {
  const terms: string[] = [];
  let words = 0;
  let chars = 0;
  for (const { content } of entries) {
    const term = content.trim();
    if (!term) continue;
    const termWords = term.split(/\s+/).length;
    const termChars = term.length + (terms.length > 0 ? 2 : 0);
    if (words + termWords > maxWords || chars + termChars > maxChars) break;
    terms.push(term);
    words += termWords;
    chars += termChars;
  }
  return terms.join(", ");
}
