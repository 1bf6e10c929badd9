// The evidence checker's one entry point (issue 24): a letter and the consultation it was written from in, every
// sentence with the segments it rests on and the flags a doctor should look at, and the facts left out. Pure,
// synchronous and deterministic — no database, no language model, no I/O — so it can run after every letter
// step, in a test, in the bench, and later in the editor as the doctor types.

import { isNoInformation, type LetterSection } from "../letters/letter-content";
import {
  buildCorpus,
  checkCitation,
  linkSentence,
  unitsOf,
  type CitationCheck,
  type Segment,
  type Support,
} from "./evidence";
import { contentTokens, fold, numberKey, tokenize, type Token } from "./normalise";
import { findOmissions, indexLetter, type EmptySection, type Omission } from "./omissions";
import { splitSentences } from "./sentences";
import { checkSentence, numbersSaid, segmentPolarities, sidesSaid, type Flag } from "./strict-checks";

export type { CitationCheck, Segment } from "./evidence";
export type { Flag, FlagKind } from "./strict-checks";
export type { Omission, EmptySection } from "./omissions";

export type CheckLetterInput = {
  sections: LetterSection[];
  segments: Segment[];
  /** Further material the letter may draw on (referral, earlier findings): evidence like the transcript. */
  additionalContext?: string;
  /** The template's fixed text: sentences taken from it are neither claims nor inventions. */
  fixedText?: string;
  /** The letter's language; the rules cover German and English alike, so it is informational for now. */
  language?: string | null;
  /**
   * The segment ids the model named for a sentence when it wrote it (structured output with sources); null when it
   * named none or did not write it. Each is verified, never trusted.
   */
  citedFor?: (sentence: { section: number; text: string }) => string[] | null;
};

/** "supported" and "unsupported" are claims; "neutral" sentences claim nothing ("Keine Informationen gefunden"). */
export type SentenceStatus = "supported" | "unsupported" | "neutral";

export type CheckedSentence = {
  /** The section's index in `sections`. */
  section: number;
  /** The sentence's index within its section. */
  index: number;
  /** Offsets in the section's text. */
  start: number;
  end: number;
  text: string;
  status: SentenceStatus;
  /** Share of the sentence's weighted content found in the consultation, 0–1. */
  coverage: number;
  support: Support[];
  flags: Flag[];
  /** The model's named sources, checked; null when it named none. */
  citation: CitationCheck | null;
};

export type CheckLetterResult = {
  sentences: CheckedSentence[];
  omissions: Omission[];
  emptySections: EmptySection[];
  /** Unsupported sentences; sentences with a strict flag (number, dose, date, side, negation, unknown drug); omissions. */
  counts: { unsupported: number; flagged: number; omissions: number };
};

function squash(text: string): string {
  return fold(text)
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

function contextSegments(text: string | undefined): Segment[] {
  if (!text?.trim()) return [];
  return splitSentences(text).map((s, i) => ({
    id: `context-${i}`,
    speaker: "context",
    start: 0,
    end: 0,
    text: s.text,
  }));
}

function shift(tokens: Token[], by: number): Token[] {
  return tokens.map((t) => ({ ...t, start: t.start + by, end: t.end + by }));
}

/**
 * A sentence's leading label ("Medical Reasoning:", "Respiratory:", "Befund:") names where a claim stands, not
 * what it claims: its words are left out of matching. A label that names a side or a number is kept ("Right
 * knee: …").
 */
function withoutLabel(tokens: Token[]): Token[] {
  const colon = tokens.findIndex((t) => t.kind === "punct" && t.surface === ":");
  if (colon <= 0) return tokens;
  const label = contentTokens(tokens.slice(0, colon));
  if (label.length > 4 || label.some((t) => t.side || t.kind !== "word")) return tokens;
  if (contentTokens(tokens.slice(colon + 1)).length === 0) return tokens;
  return tokens.map((t, i) => (i < colon && !t.stop ? { ...t, stop: true } : t));
}

/** A heading inside a section: a line ending in a colon, or a short line without a full stop above more lines. */
function isHeading(sectionText: string, span: { end: number; text: string }): boolean {
  const text = span.text.trim();
  if (text.endsWith(":")) return true;
  const rest = sectionText.slice(span.end);
  const lineEnds = /^[^\S\n]*\n/.test(rest) && rest.trim() !== "";
  return lineEnds && !/[.!?;)]$/.test(text) && !/\d/.test(text) && text.split(/\s+/).length <= 3;
}

export function checkLetter(input: CheckLetterInput): CheckLetterResult {
  const fixed = input.fixedText ? squash(input.fixedText) : "";
  const fixedNumbers = new Set<string>();
  if (input.fixedText)
    for (const t of tokenize(input.fixedText)) if (t.value !== undefined) fixedNumbers.add(numberKey(t.value));

  const pieces = input.sections.flatMap((section, sectionIndex) =>
    splitSentences(section.text).map((span, index) => ({
      sectionIndex,
      index,
      span,
      heading: isHeading(section.text, span),
      tokens: withoutLabel(shift(tokenize(span.text), span.start)),
    })),
  );
  const letterVocabulary = new Set<string>();
  for (const p of pieces) for (const t of contentTokens(p.tokens)) letterVocabulary.add(t.key);

  const corpus = buildCorpus([...input.segments, ...contextSegments(input.additionalContext)], letterVocabulary);
  const polarities = segmentPolarities(corpus);
  const sides = sidesSaid(corpus);
  const numbers = numbersSaid(corpus);
  const splitVocabulary = new Set([...corpus.vocabulary, ...letterVocabulary]);

  const sentences: CheckedSentence[] = pieces.map(({ sectionIndex, index, span, heading, tokens }) => {
    const base = { section: sectionIndex, index, start: span.start, end: span.end, text: span.text };
    const neutral =
      heading ||
      isNoInformation(span.text) ||
      contentTokens(tokens).length === 0 ||
      (fixed !== "" && fixed.includes(squash(span.text)));
    if (neutral) return { ...base, status: "neutral" as const, coverage: 0, support: [], flags: [], citation: null };
    const units = unitsOf(corpus, tokens, splitVocabulary);
    const linking = linkSentence(corpus, units);
    const sectionText = input.sections[sectionIndex]!.text;
    const flags = checkSentence(
      { corpus, polarities, sides, numbers, tokens, linking, extraNumbers: fixedNumbers },
      sectionText,
    );
    if (!linking.supported) flags.unshift({ kind: "unsupported", start: span.start, end: span.end, text: span.text });
    const cited = input.citedFor?.({ section: sectionIndex, text: span.text }) ?? null;
    const citation = cited && cited.length > 0 ? checkCitation(corpus, units, cited) : null;
    // Sources named that do not hold the sentence — all of them, or one the consultation does not have — are the
    // model vouching for what it cannot show: a flag of its own, even on a sentence the checker finds elsewhere.
    if (citation && (citation.holding.length === 0 || citation.unknown.length > 0))
      flags.push({ kind: "citation", start: span.start, end: span.end, text: span.text });
    return {
      ...base,
      status: linking.supported ? ("supported" as const) : ("unsupported" as const),
      coverage: Math.round(linking.coverage * 1000) / 1000,
      support: linking.support,
      flags,
      citation,
    };
  });

  const { omissions, emptySections } = findOmissions(corpus, input.sections, indexLetter(pieces.map((p) => p.tokens)));
  const isStrict = (f: Flag, s: CheckedSentence) =>
    !(f.kind === "unsupported" && f.start === s.start && f.end === s.end) && f.kind !== "citation";
  return {
    sentences,
    omissions,
    emptySections,
    counts: {
      unsupported: sentences.filter((s) => s.status === "unsupported").length,
      flagged: sentences.filter((s) => s.flags.some((f) => isStrict(f, s))).length,
      omissions: omissions.length + emptySections.length,
    },
  };
}
