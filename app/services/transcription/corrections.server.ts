import type { TranscriptVersionKind } from "~/models/schema";
import { wordKnower } from "./word-lexicon.server";
import { insertTranscriptVersion, listTranscriptVersions, lockTranscript } from "~/models/transcript-version.server";
import { getDb } from "~/models/db.server";
import { SPEAKER_ROLES, type SpeakerRole, type TranscriptDocument } from "../speech/transcript-format";
import { DomainError } from "../web/domain-error.server";
import {
  applyChange,
  applyChanges,
  ChangeRefused,
  CORRECTION_MAX_CHARS,
  identicalWords,
  reviewItems,
  SPEAKER_NAME_MAX_CHARS,
  wordAt,
  type TranscriptChange,
  type WordRef,
} from "./corrections";
import { getTranscript } from "./transcripts.server";
import {
  addVocabularyTerm,
  vocabularyKeys,
  vocabularyLanguage,
  type VocabularyOutcome,
} from "./user-vocabulary.server";

// Transcript corrections (issue 24, ADR 0031): every change the doctor makes — a word corrected or confirmed (once or
// at every identical occurrence), a speaker named, two speakers merged, a paragraph moved to another speaker — is a new
// version of the transcript; the recognised one is never changed. A change names the version it was made on: if
// another change came first, it is refused as a conflict (409), as the letter editor refuses a stale save, and nothing
// is written. Both doors — the transcript page's forms and the JSON API — read their fields here.

const ERR = "transcriptions:corrections.errors";

export type Target = { userId: string; key: string; baseVersion: number };

/** The version a change was made on: a whole number from 1 on, or the change is refused. */
export function baseVersionFrom(value: unknown): number {
  const number = typeof value === "string" && /^\d{1,9}$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 1)
    throw new DomainError("invalid", `${ERR}.baseVersionRequired`);
  return number;
}

/** A segment id as segments.ts makes them ("t3p0"). */
export function segmentFrom(value: unknown): string {
  if (typeof value !== "string" || !/^t\d{1,6}p\d{1,6}$/.test(value))
    throw new DomainError("invalid", `${ERR}.segmentNotFound`);
  return value;
}

/** A word's place as the forms and the API name it: its segment id and its index there. */
export function wordRefFrom(segment: unknown, index: unknown): WordRef {
  const place = typeof index === "string" && /^\d{1,6}$/.test(index.trim()) ? Number(index) : index;
  if (typeof segment !== "string" || !/^t\d{1,6}p\d{1,6}$/.test(segment) || typeof place !== "number")
    throw new DomainError("invalid", `${ERR}.wordRequired`);
  if (!Number.isInteger(place) || place < 0) throw new DomainError("invalid", `${ERR}.wordRequired`);
  return { segment, index: place };
}

/** The corrected text: trimmed, 1–60 characters, one line, no control characters. */
export function correctionTextFrom(value: unknown): string {
  const text = typeof value === "string" ? value.trim().normalize("NFC") : "";
  if (!text) throw new DomainError("invalid", `${ERR}.textRequired`);
  if (text.length > CORRECTION_MAX_CHARS)
    throw new DomainError("invalid", `${ERR}.textTooLong`, [], { max: String(CORRECTION_MAX_CHARS) });
  if (/\p{Cc}|\p{Cf}|[\u2028\u2029]/u.test(text)) throw new DomainError("invalid", `${ERR}.textInvalid`);
  return text;
}

/** A speaker label as the transcript has it ("S1"); any non-empty text up to 100 characters. */
export function speakerFrom(value: unknown): string {
  if (typeof value !== "string" || !value || value.length > 100)
    throw new DomainError("invalid", `${ERR}.speakerRequired`);
  return value;
}

/** A speaker's name: a role from the list, or a name typed (which wins), or neither to take the name away. */
export function speakerNameFrom(role: unknown, name: unknown): { role: SpeakerRole | null; name: string | null } {
  const typed = typeof name === "string" ? name.trim().normalize("NFC") : "";
  if (name !== undefined && name !== null && typeof name !== "string")
    throw new DomainError("invalid", `${ERR}.nameInvalid`);
  if (typed.length > SPEAKER_NAME_MAX_CHARS)
    throw new DomainError("invalid", `${ERR}.nameTooLong`, [], { max: String(SPEAKER_NAME_MAX_CHARS) });
  if (/\p{Cc}|\p{Cf}|[\u2028\u2029]/u.test(typed)) throw new DomainError("invalid", `${ERR}.nameInvalid`);
  if (typed) return { role: null, name: typed };
  if (role === undefined || role === null || role === "") return { role: null, name: null };
  if (typeof role !== "string" || !(SPEAKER_ROLES as readonly string[]).includes(role))
    throw new DomainError("invalid", `${ERR}.roleInvalid`);
  return { role: role as SpeakerRole, name: null };
}

function refused(error: unknown): never {
  if (error instanceof ChangeRefused) throw new DomainError(error.kind, error.message);
  throw error;
}

/**
 * One change as a new version: the transcript read, its row locked, the base version checked against the latest,
 * the change made from the current transcript (`make`), applied to check it fits, and stored — all in one
 * transaction, with whatever `alongside` writes with it (a corrected term for the vocabulary).
 */
async function changeTranscript<T>(
  target: Target,
  kind: TranscriptVersionKind,
  make: (current: TranscriptDocument) => TranscriptChange,
  alongside?: (
    trx: Parameters<typeof addVocabularyTerm>[0],
    change: TranscriptChange,
    current: TranscriptDocument,
  ) => Promise<T>,
) {
  const { row, recognised } = await getTranscript({ userId: target.userId, key: target.key });
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const locked = await lockTranscript(trx, { ownerId: target.userId, id: row.id });
      if (!locked) throw new DomainError("not_found", "transcriptions:errors.transcriptNotFound");
      const versions = await listTranscriptVersions({ ownerId: target.userId, transcriptId: row.id }, trx);
      const latest = versions.at(-1)?.version ?? 1;
      if (target.baseVersion !== latest) throw new DomainError("conflict", `${ERR}.changedMeanwhile`);
      const current = applyChanges(
        recognised,
        versions.map((v) => v.change as TranscriptChange),
      );
      const change = (() => {
        try {
          const made = make(current);
          applyChange(current, made);
          return made;
        } catch (error) {
          return refused(error);
        }
      })();
      const version = latest + 1;
      await insertTranscriptVersion(trx, {
        ownerId: target.userId,
        transcriptId: row.id,
        version,
        kind,
        change,
        authorId: target.userId,
      });
      const extra = alongside ? await alongside(trx, change, current) : undefined;
      return { version, transcriptKey: row.storage_key, change, extra };
    });
}

function requireWord(document: TranscriptDocument, ref: WordRef) {
  const word = wordAt(document, ref);
  if (!word) throw new ChangeRefused(`${ERR}.wordNotFound`, "not_found");
  return word;
}

/**
 * A word corrected — at every identical occurrence when `applyToAll` — as a new version. The corrected term joins the
 * doctor's vocabulary when `addToVocabulary` (with the heard form as its misheard variant). Typing the word as it was
 * heard confirms it instead.
 */
export async function correctWord(
  args: Target & { word: WordRef; text: string; applyToAll: boolean; addToVocabulary: boolean },
) {
  let heard = "";
  const result = await changeTranscript(
    args,
    "correction",
    (current) => {
      heard = requireWord(current, args.word).text;
      const words = args.applyToAll ? identicalWords(current, heard) : [args.word];
      return heard === args.text ? { op: "confirm", words } : { op: "correct", words, text: args.text };
    },
    async (trx, change, current): Promise<VocabularyOutcome | null> =>
      change.op === "correct" && args.addToVocabulary
        ? addVocabularyTerm(trx, {
            userId: args.userId,
            language: vocabularyLanguage(current.language_code),
            content: args.text,
            heard,
          })
        : null,
  );
  const words = result.change.op === "correct" || result.change.op === "confirm" ? result.change.words.length : 0;
  return {
    version: result.version,
    transcriptKey: result.transcriptKey,
    kind: result.change.op === "correct" ? ("corrected" as const) : ("confirmed" as const),
    words,
    vocabulary: result.extra ?? null,
  };
}

/** A word confirmed as heard (at every identical occurrence when `applyToAll`): it leaves the review. */
export async function confirmWord(args: Target & { word: WordRef; applyToAll: boolean; addToVocabulary?: boolean }) {
  let confirmed = "";
  const result = await changeTranscript(
    args,
    "confirmation",
    (current) => {
      confirmed = requireWord(current, args.word).text;
      return { op: "confirm", words: args.applyToAll ? identicalWords(current, confirmed) : [args.word] };
    },
    // A word no lexicon knows, confirmed as right, is a term of the doctor's: it joins the vocabulary when asked, so
    // the engines receive it and the next review does not ask again. A confirmed ordinary word teaches nothing.
    async (trx, _change, current): Promise<VocabularyOutcome | null> => {
      if (!args.addToVocabulary) return null;
      const language = vocabularyLanguage(current.language_code);
      if ((await wordKnower(language))(confirmed)) return null;
      const content = confirmed.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
      return addVocabularyTerm(trx, { userId: args.userId, language, content, heard: "" });
    },
  );
  const words = result.change.op === "confirm" ? result.change.words.length : 0;
  return { version: result.version, transcriptKey: result.transcriptKey, words, vocabulary: result.extra ?? null };
}

/** A speaker named by role or name ("Ärztin/Arzt", "Frau Weber"), or the name taken away (both null). */
export async function nameSpeaker(args: Target & { speaker: string; role: SpeakerRole | null; name: string | null }) {
  const result = await changeTranscript(args, "speakers", () => ({
    op: "name",
    speaker: args.speaker,
    role: args.role,
    name: args.name,
  }));
  return { version: result.version, transcriptKey: result.transcriptKey };
}

/** Two speakers made one: every turn of `from` becomes `into`'s. */
export async function mergeSpeakers(args: Target & { from: string; into: string }) {
  const result = await changeTranscript(args, "speakers", () => ({ op: "merge", from: args.from, into: args.into }));
  return { version: result.version, transcriptKey: result.transcriptKey };
}

/** One paragraph (a segment) given to another speaker; its id and every other segment's stay. */
export async function moveSegment(args: Target & { segment: string; to: string }) {
  const result = await changeTranscript(args, "speakers", () => ({ op: "move", segment: args.segment, to: args.to }));
  return { version: result.version, transcriptKey: result.transcriptKey };
}

/** The review of a transcript: the current version, its number, and the words to look at again, in order. */
export async function transcriptReview(args: { userId: string; key: string }) {
  const transcript = await getTranscript(args);
  const language = vocabularyLanguage(transcript.document.language_code);
  const [vocabulary, knows] = await Promise.all([
    vocabularyKeys({ userId: args.userId, language }),
    wordKnower(language),
  ]);
  return { ...transcript, items: reviewItems(transcript.document, vocabulary, knows) };
}
