// Which parts of the consultation a letter sentence rests on (issue 24). Explainable on purpose: a doctor must
// be able to see why a sentence counts as supported, so the measure is lexical — the share of the sentence's
// content words (weighted by how rare they are in this consultation, IDF) found in a few windows of adjacent
// transcript segments. A window holds up to three segments because a fact is often a question and its answer
// ("Haben Sie Allergien?" / "Ja, gegen Penicillin"). Words meet through normalise.ts (stems, numbers, units,
// abbreviations, concepts), through compounds split against the consultation's own vocabulary
// ("Brustschmerzen" → "Brust" + "Schmerz") and through shared word beginnings ("kardiologisch" / "Kardiologen").

import {
  CONCEPT_MEMBER_KEYS,
  conceptsOf,
  contentTokens,
  fold,
  isFrameWord,
  matchForm,
  stem,
  tokenize,
  type Token,
} from "./normalise";

export type Segment = { id: string; speaker: string; start: number; end: number; text: string };

/** A segment of the consultation, tokenized once, with every key it can be matched by. */
export type CorpusSegment = Segment & { tokens: Token[]; keys: Set<string>; question: boolean };

export type Corpus = {
  segments: CorpusSegment[];
  /** How many segments hold each key. */
  df: Map<string, number>;
  /** Every key of the consultation: word keys, concept ids, compound parts, numbers. */
  vocabulary: Set<string>;
  /** Segment indexes by key. */
  postings: Map<string, number[]>;
  /** Word keys by their first four letters, for related-word lookups. */
  prefixes: Map<string, string[]>;
  related: Map<string, string[]>;
  splits: Map<string, string[]>;
};

/** Tunables, named so that the bench and the tests speak of the same thing. */
export const LINKING = {
  /** A sentence is supported when this share of its weighted content is found. */
  threshold: 0.5,
  /** The most windows one sentence may draw on (a summary sentence gathers several moments). */
  maxWindows: 3,
  /** The most segments in one window. */
  windowSize: 3,
  /** A further window must add at least this much coverage. */
  minGain: 0.1,
} as const;

const MIN_PART = 3;

/**
 * A compound split into keys of `vocabulary`, with an optional linking s or n between the parts
 * ("Belastungs-dyspnoe", "Herz-ultraschall", "Brust-schmerzen"); up to three parts. Empty when no split fits.
 */
export function splitCompound(surface: string, vocabulary: Set<string>): string[] {
  const form = matchForm(fold(surface)).replace(/[^a-zµ]/g, "");
  if (form.length < 7) return [];
  return splitForm(form, vocabulary, 0) ?? [];
}

function splitForm(form: string, vocabulary: Set<string>, depth: number): string[] | undefined {
  let best: string[] | undefined;
  for (let i = MIN_PART; i <= form.length - MIN_PART; i++) {
    const left = form.slice(0, i);
    const rightRaw = form.slice(i);
    const lefts = [left, stem(left)];
    if (/(s|n)$/.test(left) && left.length > MIN_PART + 1) lefts.push(left.slice(0, -1), stem(left.slice(0, -1)));
    if (/(en|es)$/.test(left) && left.length > MIN_PART + 2) lefts.push(left.slice(0, -2));
    const leftKey = lefts.find((l) => l.length >= MIN_PART && vocabulary.has(l));
    if (!leftKey) continue;
    const rightKey = stem(rightRaw);
    let parts: string[] | undefined;
    if (rightKey.length >= MIN_PART && vocabulary.has(rightKey)) parts = [leftKey, rightKey];
    else if (depth < 1 && rightRaw.length >= 2 * MIN_PART) {
      const rest = splitForm(rightRaw, vocabulary, depth + 1);
      if (rest) parts = [leftKey, ...rest];
    }
    // Prefer the split with the longest shortest part: "Brust|schmerz" over "Bru|st…".
    if (parts && (!best || Math.min(...parts.map((p) => p.length)) > Math.min(...best.map((p) => p.length)))) {
      best = parts;
    }
  }
  return best;
}

/** Word keys that share a beginning: "kardiolog" / "kardiologisch", "echokardiograph" / "echokardiogramm". */
function isRelated(a: string, b: string): boolean {
  const shorter = a.length <= b.length ? a : b;
  const longer = shorter === a ? b : a;
  if (shorter.length < 5) return false;
  if (longer.startsWith(shorter)) return true;
  let common = 0;
  while (common < shorter.length && a[common] === b[common]) common++;
  return common >= 6 && common >= 0.75 * shorter.length;
}

function keysOfToken(token: Token, splits: string[]): string[] {
  const parts = [...token.parts, ...splits];
  return [token.key, ...token.alts, ...parts, ...parts.flatMap(conceptsOf)];
}

function isQuestion(text: string): boolean {
  return /\?\s*$/.test(text.trim()) || /\?/.test(text);
}

/** The consultation, ready to be matched against any number of sentences. */
export function buildCorpus(segments: Segment[], extraVocabulary: Iterable<string> = []): Corpus {
  const tokenized = segments.map((s) => ({ ...s, tokens: tokenize(s.text), question: isQuestion(s.text) }));
  const vocabulary = new Set<string>(CONCEPT_MEMBER_KEYS);
  for (const s of tokenized) for (const t of contentTokens(s.tokens)) vocabulary.add(t.key);
  for (const k of extraVocabulary) vocabulary.add(k);
  const splits = new Map<string, string[]>();
  const corpusSegments: CorpusSegment[] = tokenized.map((s) => {
    const keys = new Set<string>();
    for (const t of contentTokens(s.tokens)) {
      let parts = splits.get(t.key);
      if (parts === undefined) {
        parts = t.kind === "word" && t.key.length >= 7 ? splitCompound(t.surface, vocabulary) : [];
        splits.set(t.key, parts);
      }
      for (const k of keysOfToken(t, parts)) keys.add(k);
    }
    return { ...s, keys };
  });
  const df = new Map<string, number>();
  const postings = new Map<string, number[]>();
  corpusSegments.forEach((s, index) => {
    for (const k of s.keys) {
      df.set(k, (df.get(k) ?? 0) + 1);
      const list = postings.get(k);
      if (list) list.push(index);
      else postings.set(k, [index]);
    }
  });
  const prefixes = new Map<string, string[]>();
  for (const k of postings.keys()) {
    if (k.length < 5 || k.includes(":") || /\d/.test(k)) continue;
    const p = k.slice(0, 4);
    const list = prefixes.get(p);
    if (list) list.push(k);
    else prefixes.set(p, [k]);
  }
  return {
    segments: corpusSegments,
    df,
    vocabulary: new Set(postings.keys()),
    postings,
    prefixes,
    related: new Map(),
    splits,
  };
}

/** Keys of the consultation a letter's word key meets through a shared beginning. */
export function relatedKeys(corpus: Corpus, key: string): string[] {
  const cached = corpus.related.get(key);
  if (cached) return cached;
  const found =
    key.length < 5 || key.includes(":")
      ? []
      : (corpus.prefixes.get(key.slice(0, 4)) ?? []).filter((k) => k !== key && isRelated(k, key));
  corpus.related.set(key, found);
  return found;
}

/**
 * A letter token as the linker sees it: the keys that count as finding it, and parts that count partly (each
 * part with the keys that count as finding that part).
 */
export type Unit = { token: Token; keys: string[]; parts: string[][]; weight: number };

function idf(corpus: Corpus, df: number): number {
  const n = corpus.segments.length;
  return Math.log((n + 1) / (df + 0.5));
}

/**
 * The sentence's content, one unit per distinct key, weighted by rarity in the consultation. `vocabulary` is
 * what compounds may be split into: the consultation's keys and the letter's.
 */
export function unitsOf(corpus: Corpus, tokens: Token[], vocabulary: Set<string>): Unit[] {
  const seen = new Set<string>();
  const units: Unit[] = [];
  for (const t of contentTokens(tokens)) {
    if (t.kind === "date" || seen.has(t.key)) continue;
    seen.add(t.key);
    const keys = [t.key, ...t.alts, ...(t.kind === "word" ? relatedKeys(corpus, t.key) : [])];
    let parts = t.parts;
    if (parts.length === 0 && t.kind === "word" && t.key.length >= 7 && !keys.some((k) => corpus.vocabulary.has(k))) {
      parts = splitCompound(t.surface, vocabulary);
    }
    const partKeys = parts.map((p) => [p, ...conceptsOf(p), ...relatedKeys(corpus, p)]);
    const present = [...keys, ...partKeys.flat()].map((k) => corpus.df.get(k) ?? 0).filter((d) => d > 0);
    // A word the consultation never uses weighs as much as its rarest word: it is what an invention looks like.
    const df = present.length > 0 ? Math.min(...present) : 1;
    // Units and bare numbers are half the claim at most: "mg" alone supports nothing.
    // Frame words count for little too: "History of asthma" is not supported by "history".
    const scale = t.kind === "unit" || isFrameWord(t) ? 0.3 : 1;
    units.push({ token: t, keys, parts: partKeys, weight: Math.max(0.2, idf(corpus, df)) * scale });
  }
  return units;
}

export type Window = { from: number; to: number; credits: number[] };
export type Support = { segmentId: string; score: number };
export type Linking = {
  units: Unit[];
  coverage: number;
  supported: boolean;
  windows: Window[];
  /** Segments ranked by the share of the sentence's weight each one holds. */
  support: Support[];
};

/** Segments whose own share of the sentence is highest are the only ones windows are built around. */
const TOP_SEGMENTS = 24;

/** Per segment holding any of the sentence, the credit it gives each unit; from the postings, not a scan. */
function segmentCredits(corpus: Corpus, units: Unit[]): Map<number, number[]> {
  const credits = new Map<number, number[]>();
  const row = (s: number) => {
    let r = credits.get(s);
    if (!r) {
      r = units.map(() => 0);
      credits.set(s, r);
    }
    return r;
  };
  units.forEach((unit, k) => {
    const full = new Set<number>();
    for (const key of unit.keys) for (const s of corpus.postings.get(key) ?? []) full.add(s);
    for (const s of full) row(s)[k] = 1;
    if (unit.parts.length === 0) return;
    const found = new Map<number, number>();
    for (const alternatives of unit.parts) {
      const holding = new Set<number>();
      for (const key of alternatives) for (const s of corpus.postings.get(key) ?? []) holding.add(s);
      for (const s of holding) if (!full.has(s)) found.set(s, (found.get(s) ?? 0) + 1);
    }
    for (const [s, n] of found) row(s)[k] = n / unit.parts.length;
  });
  return credits;
}

function questionsIn(corpus: Corpus, w: Window) {
  let n = 0;
  for (let s = w.from; s <= w.to; s++) if (corpus.segments[s]!.question) n++;
  return n;
}

/** The windows of the consultation that hold the most of the sentence, chosen greedily. */
export function linkSentence(corpus: Corpus, units: Unit[]): Linking {
  const total = units.reduce((sum, u) => sum + u.weight, 0);
  if (total === 0 || corpus.segments.length === 0)
    return { units, coverage: 0, supported: false, windows: [], support: [] };
  const credits = segmentCredits(corpus, units);
  const own = (c: number[]) => c.reduce((sum, v, k) => sum + v * units[k]!.weight, 0);
  const top = [...credits.entries()]
    .map(([s, c]) => [s, own(c)] as const)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, TOP_SEGMENTS)
    .map(([s]) => s);
  const windows: Window[] = [];
  const seen = new Set<string>();
  for (const i of top) {
    for (let from = Math.max(0, i - LINKING.windowSize + 1); from <= i; from++) {
      for (let to = i; to < Math.min(corpus.segments.length, from + LINKING.windowSize); to++) {
        const id = `${from}:${to}`;
        if (seen.has(id)) continue;
        seen.add(id);
        const sum = units.map(() => 0);
        for (let s = from; s <= to; s++) {
          const c = credits.get(s);
          if (c) c.forEach((v, k) => (sum[k] = Math.max(sum[k]!, v)));
        }
        windows.push({ from, to, credits: sum });
      }
    }
  }
  const chosen: Window[] = [];
  const best = units.map(() => 0);
  let coverage = 0;
  for (let round = 0; round < LINKING.maxWindows; round++) {
    let pick: Window | undefined;
    let pickGain = 0;
    for (const w of windows) {
      let gain = 0;
      w.credits.forEach((v, k) => {
        if (v > best[k]!) gain += (v - best[k]!) * units[k]!.weight;
      });
      gain /= total;
      // Smaller windows win ties: the answer alone rather than the answer and two neighbours; between windows of one
      // size, the one with fewer questions — "Hatten Sie Fieber?" holds the words, "Nein, kein Fieber" the fact.
      const tie = pick && Math.abs(gain - pickGain) < 1e-9;
      const smaller = tie && w.to - w.from < pick!.to - pick!.from;
      const fewerQuestions =
        tie && w.to - w.from === pick!.to - pick!.from && questionsIn(corpus, w) < questionsIn(corpus, pick!);
      if (gain > pickGain + 1e-9 || smaller || fewerQuestions) {
        pick = w;
        pickGain = gain;
      }
    }
    if (!pick || pickGain < (round === 0 ? 1e-9 : LINKING.minGain)) break;
    chosen.push(pick);
    pick.credits.forEach((v, k) => (best[k] = Math.max(best[k]!, v)));
    coverage += pickGain;
  }
  const scores = new Map<number, number>();
  for (const w of chosen) {
    for (let s = w.from; s <= w.to; s++) {
      const c = credits.get(s);
      if (!c) continue;
      const score = c.reduce((sum, v, k) => sum + v * units[k]!.weight, 0) / total;
      if (score > 0) scores.set(s, Math.max(scores.get(s) ?? 0, score));
    }
  }
  const support = [...scores.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .map(([s, score]) => ({ segmentId: corpus.segments[s]!.id, score: Math.round(score * 1000) / 1000 }));
  return { units, coverage, supported: coverage >= LINKING.threshold, windows: chosen, support };
}

/** A source the model named holds a statement when the passage around it holds this share of its content. */
export const CITATION_HOLDS = 0.3;

export type CitationCheck = {
  /** The named ids whose passage (the segment and its neighbours: a question and its answer) holds the statement. */
  holding: string[];
  /** Named ids that exist but whose passage does not hold it. */
  notHolding: string[];
  /** Named ids the consultation has no segment of: the model made them up. */
  unknown: string[];
};

/**
 * The independent check of a model's citation (issue 24): each source the model named for a sentence, looked up in
 * the consultation and measured as the linker measures — never taken on the model's word. A segment counts with its
 * neighbours, as a window does, because "Nein, keine" holds a fact only with the question before it.
 */
export function checkCitation(corpus: Corpus, units: Unit[], ids: string[]): CitationCheck {
  const result: CitationCheck = { holding: [], notHolding: [], unknown: [] };
  const total = units.reduce((sum, u) => sum + u.weight, 0);
  const index = new Map(corpus.segments.map((s, i) => [s.id, i]));
  const credits = total > 0 ? segmentCredits(corpus, units) : new Map<number, number[]>();
  for (const id of new Set(ids)) {
    const at = index.get(id);
    if (at === undefined) {
      result.unknown.push(id);
      continue;
    }
    const best = units.map(() => 0);
    for (let s = Math.max(0, at - 1); s <= Math.min(corpus.segments.length - 1, at + 1); s++)
      credits.get(s)?.forEach((v, k) => (best[k] = Math.max(best[k]!, v)));
    const share = total > 0 ? best.reduce((sum, v, k) => sum + v * units[k]!.weight, 0) / total : 0;
    (share >= CITATION_HOLDS ? result.holding : result.notHolding).push(id);
  }
  return result;
}
