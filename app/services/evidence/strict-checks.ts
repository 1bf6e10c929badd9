// The details a sentence can get wrong while its words are all there (issue 24): "Ramipril 10 mg" where the
// doctor said five, "links" where the patient said right, "Fieber" where the answer was "kein Fieber". Word
// overlap cannot see these, so each is checked on its own against the segments the sentence rests on (and, for a
// sentence with no support, against the whole consultation). A flag names its kind and the letter's words.

import type { Corpus, CorpusSegment, Linking } from "./evidence";
import { relatedKeys } from "./evidence";
import { CONDITION_WORDS } from "./lexicon";
import {
  fold,
  isAnswerNo,
  isAnswerYes,
  isContrast,
  isDoseUnit,
  isDrugLike,
  numberKey,
  type Side,
  type Token,
} from "./normalise";

/** "citation": the model named sources for the sentence, and none of them holds it (checkCitation). */
export type FlagKind = "number" | "dose" | "date" | "side" | "negation" | "unsupported" | "citation";

/** A problem in a letter sentence; `start`/`end` are offsets in the section's text. */
export type Flag = { kind: FlagKind; start: number; end: number; text: string };

const CLAUSE_END = new Set([".", ";", ":", "!", "?", "\n"]);
/** Negations spoken after what they deny ("Blut habe ich nicht gesehen", "Für Krebs gibt es keinen Hinweis"). */
const TRAILING_CUES = new Set(["nicht", "nie", "niemals", "nichts", "kein", "keine", "keinen", "keiner"]);
/**
 * How far a negation reaches forward, in content words. Written lists carry one cue across their items
 * ("denies chest pain, shortness of breath, or swelling"); speech repeats the cue ("kein Fieber und kein
 * Husten") and runs on after a comma into what is not denied, so there the reach is short and ends at a comma.
 */
const WRITTEN_SCOPE = 8;
const SPOKEN_SCOPE = 2;
/** How many content words may stand before a trailing "nicht" in its clause and still be denied by it. */
const TRAILING_SCOPE = 3;

export type Polarity = "negated" | "affirmed" | "unknown";

function isContent(t: Token): boolean {
  return !t.stop && t.kind !== "punct";
}

/** Which tokens a negation covers; `spoken` for transcript text (see WRITTEN_SCOPE). */
export function negatedTokens(tokens: Token[], options: { spoken?: boolean } = {}): boolean[] {
  const negated = tokens.map(() => false);
  const scope = options.spoken ? SPOKEN_SCOPE : WRITTEN_SCOPE;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!t.negation) continue;
    let reach = 0;
    for (let j = i + 1; j < tokens.length && reach < scope; j++) {
      const u = tokens[j]!;
      if (
        (u.kind === "punct" && (CLAUSE_END.has(u.surface) || (options.spoken && u.surface === ","))) ||
        isContrast(u)
      ) {
        break;
      }
      if (isContent(u)) {
        negated[j] = true;
        reach++;
      }
    }
    if (TRAILING_CUES.has(fold(t.surface))) {
      const before: number[] = [];
      for (let j = i - 1; j >= 0; j--) {
        const u = tokens[j]!;
        if ((u.kind === "punct" && (CLAUSE_END.has(u.surface) || u.surface === ",")) || isContrast(u)) break;
        if (isContent(u)) before.push(j);
      }
      if (before.length <= TRAILING_SCOPE) for (const j of before) negated[j] = true;
    }
  }
  return negated;
}

/** Per token: inside a clause that opens with a condition ("Bei Harnverhalt …", "if the pain persists"). */
function inCondition(tokens: Token[]): boolean[] {
  const result = tokens.map(() => false);
  let open = false;
  let clauseStart = true;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === "punct") {
      if (CLAUSE_END.has(t.surface)) open = false;
      clauseStart = CLAUSE_END.has(t.surface) || t.surface === ",";
      continue;
    }
    if (clauseStart && CONDITIONS.has(fold(t.surface))) open = true;
    clauseStart = false;
    result[i] = open;
  }
  return result;
}

const CONDITIONS = new Set(CONDITION_WORDS.split(/\s+/).filter(Boolean));

/** Per token: inside a clause that ends with a question mark. */
function inQuestion(tokens: Token[]): boolean[] {
  const result = tokens.map(() => false);
  let clauseStart = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === "punct" && CLAUSE_END.has(t.surface)) {
      if (t.surface === "?") for (let j = clauseStart; j < i; j++) result[j] = true;
      clauseStart = i + 1;
    }
  }
  return result;
}

/** What the answer after a question says: its first few words. */
function answerOf(next: CorpusSegment | undefined, asker: CorpusSegment): Polarity {
  if (!next || next.speaker === asker.speaker) return "unknown";
  for (const t of next.tokens.slice(0, 4)) {
    if (isAnswerNo(t)) return "negated";
    if (isAnswerYes(t)) return "affirmed";
  }
  return "unknown";
}

type Occurrence = { polarity: Polarity };

/** Polarity of every token of every segment, computed once per consultation. */
export function segmentPolarities(corpus: Corpus): Polarity[][] {
  return corpus.segments.map((segment, index) => {
    const negated = negatedTokens(segment.tokens, { spoken: true });
    const question = inQuestion(segment.tokens);
    const answer = question.some(Boolean) ? answerOf(corpus.segments[index + 1], segment) : "unknown";
    // A question's words take the answer's polarity ("… nicht ganz leer ist?" — "Ja, oft.").
    return segment.tokens.map((_, i) =>
      question[i]
        ? answer !== "unknown"
          ? answer
          : negated[i]
            ? "negated"
            : "unknown"
        : negated[i]
          ? "negated"
          : "affirmed",
    );
  });
}

export function numbersSaid(corpus: Corpus): Set<string> {
  const numbers = new Set<string>();
  for (const segment of corpus.segments) numbersIn(segment.tokens, numbers);
  return numbers;
}

export function sidesSaid(corpus: Corpus): Set<Side> {
  const sides = new Set<Side>();
  for (const segment of corpus.segments) for (const t of segment.tokens) if (t.side) sides.add(t.side);
  return sides;
}

// ---- Evidence sets ------------------------------------------------------------------------------------------------

/** The segments a sentence is checked against: its windows, each with its neighbours (the answer, the question). */
export function evidenceSegments(corpus: Corpus, linking: Linking, reach: number): number[] {
  if (!linking.supported) return corpus.segments.map((_, i) => i);
  const picked = new Set<number>();
  for (const w of linking.windows) {
    for (let s = Math.max(0, w.from - reach); s <= Math.min(corpus.segments.length - 1, w.to + reach); s++)
      picked.add(s);
  }
  return [...picked].sort((a, b) => a - b);
}

function numbersIn(tokens: Token[], into: Set<string>): void {
  for (const t of tokens) {
    if ((t.kind === "number" || t.kind === "freq") && t.value !== undefined) into.add(numberKey(t.value));
    if (t.kind === "scheme") for (const v of t.key.slice(2).split("-")) into.add(v);
    if (t.date) {
      into.add(String(t.date.day));
      into.add(String(t.date.month));
      if (t.date.year) into.add(String(t.date.year));
    }
  }
}

// ---- Checks -------------------------------------------------------------------------------------------------------

export type CheckInput = {
  corpus: Corpus;
  polarities: Polarity[][];
  /** Every side the consultation names (sidesSaid). */
  sides: Set<Side>;
  /** Every number the consultation says (numbersSaid). */
  numbers: Set<string>;
  /** The sentence's tokens, with offsets in the section's text. */
  tokens: Token[];
  linking: Linking;
  /** Numbers the letter may carry without the consultation saying them: the template's fixed text. */
  extraNumbers: Set<string>;
};

function flag(kind: FlagKind, token: Token, text: string): Flag {
  return { kind, start: token.start, end: token.end, text: text.slice(token.start, token.end) };
}

const GENERIC_ANCHORS = new Set(["side", "seite", "seit", "sid"]);

/** The body part a side word qualifies: the keys of the next content words ("left lower quadrant", "linken Arm"). */
function anchorOf(tokens: Token[], i: number): Set<string> {
  const anchor = new Set<string>();
  let taken = 0;
  for (let j = i + 1; j < tokens.length && taken < 3; j++) {
    const u = tokens[j]!;
    if (u.kind === "punct" && u.surface !== "-") break;
    if (u.stop || u.side || u.kind !== "word" || GENERIC_ANCHORS.has(u.key)) continue;
    anchor.add(u.key);
    for (const a of u.alts) anchor.add(a);
    taken++;
  }
  return anchor;
}

/** How often the given segments name each side for a body part sharing a key with `anchor`. */
function sidesOf(corpus: Corpus, segments: number[], anchor: Set<string>): Map<Side, number> {
  const sides = new Map<Side, number>();
  if (anchor.size === 0) return sides;
  for (const s of segments) {
    const tokens = corpus.segments[s]!.tokens;
    tokens.forEach((u, i) => {
      if (!u.side) return;
      const other = anchorOf(tokens, i);
      for (const k of other) {
        if (anchor.has(k)) {
          sides.set(u.side, (sides.get(u.side) ?? 0) + 1);
          return;
        }
      }
    });
  }
  return sides;
}

/**
 * A side said of a body part this many times less often than the other is a slip the speaker corrected ("left leg
 * pain … right leg pain, right leg pain?"), not the patient's side.
 */
const SLIP_RATIO = 3;

/** Every flag for one sentence, in the order of the letter's words. */
export function checkSentence(input: CheckInput, sectionText: string): Flag[] {
  const { corpus, tokens, linking } = input;
  const flags: Flag[] = [];
  // A sentence without support is flagged as a whole already: its numbers and dates are checked against the
  // whole consultation (a number said nowhere is worth pointing at), its sides and negations are not.
  const supported = linking.supported;
  const near = supported ? evidenceSegments(corpus, linking, 1) : [];
  const wide = supported ? evidenceSegments(corpus, linking, 3) : corpus.segments.map((_, i) => i);
  const nearNumbers = new Set(input.extraNumbers);
  if (supported) for (const s of wide) numbersIn(corpus.segments[s]!.tokens, nearNumbers);
  else for (const n of input.numbers) nearNumbers.add(n);

  // Numbers and doses: the value must be said where the sentence's evidence is.
  for (const t of tokens) {
    if (t.kind !== "number" || t.weak || t.value === undefined) continue;
    if (!nearNumbers.has(numberKey(t.value)))
      flags.push(flag(isDoseUnit(t.unitAfter) ? "dose" : "number", t, sectionText));
  }

  // Frequencies: a scheme or "zweimal" against the frequencies said nearby, when any are.
  for (const t of tokens) {
    if (t.kind !== "scheme" && t.kind !== "freq") continue;
    const count = t.kind === "scheme" ? t.value! : t.value!;
    const said = new Set<number>();
    const timesOfDay = new Set<string>();
    for (const s of near) {
      for (const u of corpus.segments[s]!.tokens) {
        if (u.kind === "scheme" || u.kind === "freq") said.add(u.value!);
        if (u.kind === "word") timesOfDay.add(u.key);
      }
    }
    if (said.size === 0 || said.has(count)) continue;
    const implied = t.alts.filter((a) => !a.includes(":") && a !== "taglich");
    if (implied.length > 0 && implied.every((k) => timesOfDay.has(k))) continue;
    flags.push(flag("dose", t, sectionText));
  }

  // Dates: day and month must be said somewhere near (or, when the sentence has no support, anywhere).
  for (const t of tokens) {
    if (t.kind !== "date" || !t.date) continue;
    const { day, month } = t.date;
    const found = wide.some((s) =>
      corpus.segments[s]!.tokens.some(
        (u) =>
          u.date && ((u.date.day === day && u.date.month === month) || (u.date.day === month && u.date.month === day)),
      ),
    );
    if (!found) flags.push(flag("date", t, sectionText));
  }

  if (!supported) return finish(flags, linking, corpus, sectionText);

  // Sides: the side the letter names against the sides said of the same body part ("left knee" / "right knee")
  // near its evidence, then anywhere; failing both, against the sides said near its evidence at all.
  const nearSides = new Set<Side>();
  for (const s of near) for (const u of corpus.segments[s]!.tokens) if (u.side) nearSides.add(u.side);
  const allSides = input.sides;
  tokens.forEach((t, i) => {
    const side = t.side;
    if (!side) return;
    const anchor = anchorOf(tokens, i);
    let said = sidesOf(corpus, near, anchor);
    if (said.size === 0)
      said = sidesOf(
        corpus,
        corpus.segments.map((_, k) => k),
        anchor,
      );
    const opposite: Side | undefined = side === "left" ? "right" : side === "right" ? "left" : undefined;
    if (said.size > 0) {
      const times = said.get(side) ?? 0;
      const slip = opposite !== undefined && times > 0 && times * SLIP_RATIO <= (said.get(opposite) ?? 0);
      const fits = (times > 0 && !slip) || (side !== "both" && said.has("both")) || (side === "both" && said.size > 1);
      if (!fits) flags.push(flag("side", t, sectionText));
      return;
    }
    if (side === "both") {
      if (nearSides.size === 1 && !nearSides.has("both")) flags.push(flag("side", t, sectionText));
      return;
    }
    if (nearSides.size > 0) {
      if (!nearSides.has(side) && !nearSides.has("both") && nearSides.has(opposite!))
        flags.push(flag("side", t, sectionText));
    } else if (!allSides.has(side) && allSides.has(opposite!)) flags.push(flag("side", t, sectionText));
  });

  // Negations: a word the letter denies that the consultation only affirms, or the other way round.
  const letterNegated = negatedTokens(tokens);
  const conditional = inCondition(tokens);
  const unitByToken = new Map(linking.units.map((u) => [u.token, u]));
  tokens.forEach((t, i) => {
    const unit = unitByToken.get(t);
    if (!unit || t.kind !== "word" || t.side || conditional[i]) return;
    const letterPolarity: Polarity = letterNegated[i] ? "negated" : "affirmed";
    const keys = new Set(unit.keys);
    const occurrences: Occurrence[] = [];
    for (const s of near) {
      const segment = corpus.segments[s]!;
      if (!unit.keys.some((k) => segment.keys.has(k))) continue;
      segment.tokens.forEach((u, k) => {
        if (u.stop || u.kind === "punct") return;
        if (keys.has(u.key) || u.alts.some((a) => keys.has(a)))
          occurrences.push({ polarity: input.polarities[s]![k]! });
      });
    }
    const known = occurrences.filter((o) => o.polarity !== "unknown");
    if (known.length > 0 && !known.some((o) => o.polarity === letterPolarity))
      flags.push(flag("negation", t, sectionText));
  });

  return finish(flags, linking, corpus, sectionText);
}

/** Medications the consultation never names are inventions, however well the rest of the sentence matches. */
function finish(flags: Flag[], linking: Linking, corpus: Corpus, sectionText: string): Flag[] {
  for (const unit of linking.units) {
    const t = unit.token;
    if (!isDrugLike(t)) continue;
    const known = unit.keys.some((k) => corpus.vocabulary.has(k)) || relatedKeys(corpus, t.key).length > 0;
    if (!known) flags.push(flag("unsupported", t, sectionText));
  }
  return flags.sort((a, b) => a.start - b.start);
}
