import { createHash } from "node:crypto";
import { listCitations } from "~/models/letter-citation.server";
import { listConfirmations, insertConfirmation } from "~/models/letter-confirmation.server";
import { insertProposal, listVersionContents } from "~/models/letter.server";
import { listRecordingContext } from "~/models/letter-job.server";
import { checkLetter, type Flag, type FlagKind, type CheckedSentence } from "~/services/evidence/check-letter";
import type { FactKind } from "~/services/evidence/omissions";
import { splitSentences } from "~/services/evidence/sentences";
import { transcriptSegments, type TranscriptSegment } from "~/services/transcription/segments";
import { getTranscript } from "~/services/transcription/transcripts.server";
import { DomainError } from "~/services/web/domain-error.server";
import { wordingHash, wordingKey } from "./citations";
import { requireLetter } from "./editing.server";
import { isNoInformation, sectionsOf, toStructuredContent, type LetterSection } from "./letter-content";

// What a doctor needs to verify a letter (issue 24): every sentence with the transcript segments it rests on, the
// flags the independent checker raised (no support; a number, dose, date, side or negation that differs), the facts
// of the consultation the letter does not carry, and the doctor's confirmations. The checker
// (services/evidence/check-letter.ts) runs on every request — it is pure and takes milliseconds — so what is shown
// always matches the letter as it stands; nothing of it is stored but the confirmations.
//
// Only what a model wrote is held to account: a sentence whose wording no machine-written version has (the doctor
// wrote or changed it) is shown as the doctor's, without links and without flags — visibly, so a doctor never takes
// a stale link for evidence of their own words.

export type EvidenceSource = {
  id: string;
  speaker: string;
  start: number;
  /** The segment's words, as the transcript has them (rendered as text, never markup). */
  text: string;
  /** The model named this source when it wrote the sentence, and the checker found that it holds it. */
  cited?: true;
};

/** What became of the sources the model named for a sentence (structured output), each checked independently. */
export type EvidenceCitation = {
  /** How many sources the model named. */
  named: number;
  /** Named sources whose passage holds the sentence (also among `sources`, marked `cited`). */
  holding: number;
  /** Named sources whose passage does not hold it. */
  notHolding: EvidenceSource[];
  /** Named ids the transcript has no segment of. */
  unknown: string[];
};

export type EvidenceFlag = { kind: FlagKind; text: string; confirmed: boolean };

export type EvidenceSentence = {
  /** Names this wording of this sentence in its section; what a confirmation refers to. */
  hash: string;
  text: string;
  /** "doctor": the doctor's own wording, which the check leaves alone. */
  status: CheckedSentence["status"] | "doctor";
  sources: EvidenceSource[];
  flags: EvidenceFlag[];
  /** Null when the model named no sources for this wording (an engine that does not cite, or not its wording). */
  citation: EvidenceCitation | null;
};

export type EvidenceOmission = {
  kind: FactKind;
  text: string;
  /** The section it belongs in, as the letter titles it; null when no section fits. */
  section: string | null;
  /** That section says "Keine Informationen gefunden". */
  emptySection: boolean;
  sources: EvidenceSource[];
};

export type LetterEvidence = {
  transcriptKey: string;
  sections: Array<{ title: string; sentences: EvidenceSentence[] }>;
  omissions: EvidenceOmission[];
  /** Sections that say "Keine Informationen gefunden" while the consultation has facts of their kind. */
  emptySections: Array<{ section: string; kind: FactKind; sources: EvidenceSource[] }>;
  /** `citations`: sentences whose model-named sources do not hold them, not yet confirmed. */
  counts: { unsupported: number; flagged: number; omissions: number; citations: number };
};

/** At most this many sources per sentence: the best ones; more would bury the point. */
const SOURCES_PER_SENTENCE = 3;

export function sentenceHash(sectionTitle: string, text: string) {
  return createHash("sha256")
    .update(`${wordingKey(sectionTitle)}\n${wordingKey(text)}`)
    .digest("hex")
    .slice(0, 32);
}

function letterSections(content: unknown): LetterSection[] {
  return sectionsOf(content) ?? [{ title: "", text: typeof content === "string" ? content : "" }];
}

function wordingOf(content: unknown) {
  const wording = new Set<string>();
  for (const section of letterSections(content))
    for (const sentence of splitSentences(section.text)) wording.add(wordingKey(sentence.text));
  return wording;
}

/**
 * The wordings a machine wrote, from the letter's versions oldest first. A generated or redone letter is the
 * model's throughout. An accepted proposal ("refined") is stored as a whole letter, but only the sentences it
 * brought in — those the version before it did not have — are the machine's: the doctor's own wording elsewhere in
 * that letter stays theirs. Edited and restored versions bring in no machine wording of their own (a restored
 * version's machine sentences were counted when they were first written).
 */
function machineWording(versions: Array<{ kind: string; content: unknown }>) {
  const machine = new Set<string>();
  let before = new Set<string>();
  for (const version of versions) {
    const wording = wordingOf(version.content);
    if (version.kind === "generated" || version.kind === "redo") for (const w of wording) machine.add(w);
    if (version.kind === "refined") for (const w of wording) if (!before.has(w)) machine.add(w);
    before = wording;
  }
  return machine;
}

async function consultation(userId: string, transcriptKey: string) {
  try {
    return (await getTranscript({ userId, key: transcriptKey })).document;
  } catch (error) {
    if (error instanceof DomainError && error.kind === "not_found") return null;
    throw error;
  }
}

/** What the check needs of a letter the caller has loaded (owner-scoped) already. */
export type CheckedLetter = {
  id: string;
  transcript_key: string | null;
  recording_id: string | null;
  language_code: string | null;
  content: unknown;
};

/**
 * The evidence for a user's letter; null when there is nothing to check it against (no transcript: a letter whose
 * transcript was deleted, or one written from a text). The letter must have been loaded for this user.
 */
export async function letterEvidence(args: { userId: string; letter: CheckedLetter }): Promise<LetterEvidence | null> {
  const { letter } = args;
  if (!letter.transcript_key) return null;
  const document = await consultation(args.userId, letter.transcript_key);
  if (!document) return null;
  const segments = transcriptSegments(document);
  const [context, versions, confirmations, citations] = await Promise.all([
    letter.recording_id ? listRecordingContext({ ownerId: args.userId, recordingId: letter.recording_id }) : [],
    listVersionContents({ ownerId: args.userId, letterId: letter.id }),
    listConfirmations({ ownerId: args.userId, letterId: letter.id }),
    listCitations({ ownerId: args.userId, letterId: letter.id }),
  ]);
  const sections = letterSections(letter.content);
  const machineWritten = machineWording(versions);
  const cited = new Map(citations.map((c) => [c.wording_hash, c.segment_ids]));
  const result = checkLetter({
    sections,
    segments,
    additionalContext: context.map((c) => c.text).join("\n\n"),
    language: letter.language_code ?? document.language_code,
    // Only what the model wrote can carry its citation: a wording the doctor gave is the doctor's.
    citedFor: ({ text }) => (machineWritten.has(wordingKey(text)) ? (cited.get(wordingHash(text)) ?? null) : null),
  });
  const byId = new Map<string, TranscriptSegment>(segments.map((s) => [s.id, s]));
  const sourcesOf = (ids: string[]) =>
    ids.flatMap((id) => {
      const segment = byId.get(id);
      return segment ? [{ id, speaker: segment.speaker, start: segment.start, text: segment.text }] : [];
    });
  const confirmed = new Set(confirmations.map((c) => `${c.sentence_hash}:${c.flag_kind}`));

  const shown = sections.map((section, index) => ({
    title: section.title,
    sentences: result.sentences
      .filter((s) => s.section === index)
      .map((s): EvidenceSentence => {
        const hash = sentenceHash(section.title, s.text);
        if (s.status !== "neutral" && !machineWritten.has(wordingKey(s.text)))
          return { hash, text: s.text, status: "doctor", sources: [], flags: [], citation: null };
        const holding = s.citation?.holding ?? [];
        return {
          hash,
          text: s.text,
          status: s.status,
          // An unsupported sentence's nearest passages are no evidence (ADR 0030): none are shown as its sources.
          // Sources the model named and the checker found holding come first, marked; then the checker's own.
          sources:
            s.status === "unsupported"
              ? []
              : [
                  ...sourcesOf(holding).map((source) => ({ ...source, cited: true as const })),
                  ...sourcesOf(s.support.map((support) => support.segmentId).filter((id) => !holding.includes(id))),
                ].slice(0, Math.max(SOURCES_PER_SENTENCE, holding.length)),
          citation: s.citation
            ? {
                named: s.citation.holding.length + s.citation.notHolding.length + s.citation.unknown.length,
                holding: s.citation.holding.length,
                notHolding: sourcesOf(s.citation.notHolding),
                unknown: s.citation.unknown,
              }
            : null,
          // An unsupported sentence is one thing to look at: its own numbers or sides are not flagged apart, and
          // that the model's sources do not hold it either goes without saying.
          flags: distinctFlags(
            s.status === "unsupported" ? s.flags.filter((f) => f.kind === "unsupported") : s.flags,
          ).map((flag) => ({
            kind: flag.kind,
            text: flag.text,
            confirmed: confirmed.has(`${hash}:${flag.kind}`),
          })),
        };
      }),
  }));
  const open = shown.flatMap((s) => s.sentences).filter((s) => s.flags.some((f) => !f.confirmed));
  // An empty section ("Keine Informationen gefunden") is said on a listed omission of its kind, which can be turned
  // into a proposal: the same facts listed twice would be counted twice (also when the omission belongs in another
  // section of that kind — "Medikation" rather than "Therapie").
  const isEmpty = (section: string | null, kind: FactKind) =>
    result.emptySections.some((e) => e.section === section && e.kind === kind);
  const omissions = result.omissions.map((o) => ({
    kind: o.kind,
    text: o.text,
    section: o.section,
    emptySection: isEmpty(o.section, o.kind),
    sources: sourcesOf(o.segmentIds),
  }));
  const emptySections = result.emptySections
    .filter((e) => !omissions.some((o) => o.kind === e.kind))
    .map((e) => ({ section: e.section, kind: e.kind, sources: sourcesOf(e.segmentIds) }));
  return {
    transcriptKey: letter.transcript_key,
    sections: shown,
    omissions,
    emptySections,
    counts: {
      unsupported: open.filter((s) => s.flags.some((f) => f.kind === "unsupported" && !f.confirmed)).length,
      flagged: open.filter((s) =>
        s.flags.some((f) => f.kind !== "unsupported" && f.kind !== "citation" && !f.confirmed),
      ).length,
      citations: open.filter((s) => s.flags.some((f) => f.kind === "citation" && !f.confirmed)).length,
      omissions: omissions.length + emptySections.length,
    },
  };
}

/** One flag per kind and sentence: two differing doses in one sentence are one thing to confirm. */
function distinctFlags(flags: Flag[]) {
  const seen = new Set<FlagKind>();
  return flags.filter((flag) => !seen.has(flag.kind) && seen.add(flag.kind));
}

/**
 * The doctor confirms a flag of a sentence as it stands. Refused (not found) when the letter has no such sentence
 * with such a flag now — a stale page must not confirm a wording that is gone. True when it was not confirmed yet.
 */
export async function confirmFlag(args: { userId: string; key: string; hash: string; kind: FlagKind }) {
  const letter = await requireLetter(args.userId, args.key);
  const evidence = await letterEvidence({ userId: args.userId, letter });
  const sentence = evidence?.sections.flatMap((s) => s.sentences).find((s) => s.hash === args.hash);
  if (!sentence || !sentence.flags.some((f) => f.kind === args.kind))
    throw new DomainError("not_found", "letters:evidence.errors.flagGone");
  return insertConfirmation({
    ownerId: args.userId,
    letterId: letter.id,
    sentenceHash: args.hash,
    flagKind: args.kind,
  });
}

/**
 * A listed omission becomes a refinement proposal (the editor's proposal view: a per-section diff to accept or
 * reject): its words added to the section it belongs in, or replacing that section's "Keine Informationen gefunden".
 * Nothing is changed unasked. `index` is the omission's place in the list the doctor saw.
 */
export async function proposeOmission(args: {
  userId: string;
  key: string;
  index: number;
  /** The proposal's instruction line, as the proposal view shows it (translated by the door). */
  query: (omission: EvidenceOmission) => string;
}) {
  const letter = await requireLetter(args.userId, args.key);
  const evidence = await letterEvidence({ userId: args.userId, letter });
  const omission = evidence?.omissions[args.index];
  if (!omission) throw new DomainError("not_found", "letters:evidence.errors.omissionGone");
  const sections = sectionsOf(letter.content);
  const title = omission.section;
  if (!sections || title === null || !sections.some((s) => s.title === title))
    throw new DomainError("invalid", "letters:evidence.errors.noSectionFor");
  const fact = omission.text.trim().replace(/[.;,]?$/, ".");
  const proposed = sections.map((s) =>
    s.title !== title
      ? s
      : { ...s, text: isNoInformation(s.text) || !s.text.trim() ? fact : `${s.text.trim()} ${fact}` },
  );
  const row = await insertProposal({
    ownerId: args.userId,
    letterId: letter.id,
    baseVersion: letter.current_version,
    scope: "section",
    sectionTitle: title,
    query: args.query(omission),
    content: toStructuredContent(proposed),
  });
  return { id: row.id };
}
