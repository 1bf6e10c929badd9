// What the consultation says that the letter leaves out (issue 24). Read from the transcript only — never from a
// reference letter — as candidate facts of the kinds a doctor misses most: medications with their dose,
// allergies, measured values, diagnoses said aloud, and what happens next (a control in two weeks, a referral).
// A fact the letter does not carry is listed with the segments that say it and the section it belongs in. A
// section left at "Keine Informationen gefunden" while the consultation has facts of its kind is named as well.

import { isNoInformation, type LetterSection } from "../letters/letter-content";
import type { Corpus } from "./evidence";
import { negatedTokens } from "./strict-checks";
import {
  conceptsOf,
  contentTokens,
  fold,
  isAnswerNo,
  isDoseUnit,
  isDrugLike,
  numberKey,
  tokenize,
  type Token,
} from "./normalise";

export type FactKind = "medication" | "allergy" | "value" | "diagnosis" | "plan";

export type Fact = {
  kind: FactKind;
  /** The words of the consultation that state it. */
  text: string;
  /** What the letter must contain to carry it: word keys, or numbers ("158"), or "3 week" for intervals. */
  terms: string[];
  segmentIds: string[];
};

export type Omission = Fact & { section: string | null };
export type EmptySection = { section: string; kind: FactKind; segmentIds: string[] };

/**
 * The section titles a fact of each kind belongs under, the closer names first: a medication goes to "Medikation"
 * before "Therapie" when a template has both.
 */
const SECTION_PATTERNS: Record<FactKind, RegExp[]> = {
  medication: [/medikat|medication|medik|arznei|drug|verordn/i, /therap|treatment/i],
  allergy: [/allerg|unvertr|intoleran/i],
  value: [/befund|exam|vital|result|labor|finding|untersuch|objective|messung/i],
  diagnosis: [/diagnos|assessment|beurteil|impression|problem/i],
  plan: [/proced|plan|empfehl|follow|recommend|vorgehen|weiteres|next step/i],
};

function fitsSection(kind: FactKind, title: string): boolean {
  return SECTION_PATTERNS[kind].some((pattern) => pattern.test(title));
}

function keysOf(words: string): Set<string> {
  const keys = new Set<string>();
  for (const t of contentTokens(tokenize(words))) {
    keys.add(t.key);
    for (const a of t.alts) if (a.startsWith("c:")) keys.add(a);
  }
  return keys;
}

/** Words a measured value is named by when no unit is said ("Blutdruck 158 zu 94", "a1c of 7.2"). */
const MEASURES = keysOf(
  "Blutdruck Puls Herzfrequenz Temperatur Sättigung Gewicht Größe BMI Kreatinin eGFR Kalium Natrium LDL HDL " +
    "Cholesterin HbA1c A1c PSA Troponin Hämoglobin Leukozyten CRP TSH Glukose Blutzucker IPSS Score Punkte " +
    "Ejektionsfraktion Volumen Restharn Harnfluss Lebensqualität blood pressure pulse heart rate temperature " +
    "oxygen saturation weight height creatinine potassium sodium cholesterol glucose hemoglobin platelets " +
    "white count ejection fraction score level",
);

const ALLERGY = keysOf("Allergie allergisch allergy allergic");
const ALLERGY_TARGET_WORDS = new Set(["gegen", "auf", "to", "against"]);

const DIAGNOSIS_CUES = keysOf("Diagnose Verdacht vermute spricht diagnosis diagnosed consistent suspect impression");
/**
 * Words that announce a planned step. Not "come", "back" or "return" on their own: "come with me", "back pain" and
 * "the nurse will come in" plan nothing.
 */
const PLAN_CUES = keysOf(
  "Kontrolle Termin Wiedervorstellung Überweisung überweise Nachsorge Verlaufskontrolle " +
    "follow-up followup schedule order refer referral recheck",
);
const IN_WORDS = new Set(["in", "innerhalb", "within"]);
const NEXT_WORDS = new Set(["naechste", "naechsten", "kommende", "kommenden", "next"]);
const TIME_WORDS: Record<string, string> = {
  woche: "week",
  week: "week",
  monat: "month",
  month: "month",
  tag: "day",
  day: "day",
  jahr: "year",
  year: "year",
};

const CLAUSE_END = new Set([".", ";", "!", "?", "\n"]);

/** The clause around token `i`: from the last clause end before it to the next one. */
function clause(tokens: Token[], i: number): [number, number] {
  let from = i;
  while (from > 0 && !(tokens[from - 1]!.kind === "punct" && CLAUSE_END.has(tokens[from - 1]!.surface))) from--;
  let to = i;
  while (to < tokens.length - 1 && !(tokens[to + 1]!.kind === "punct" && CLAUSE_END.has(tokens[to + 1]!.surface))) to++;
  return [from, to];
}

function textOf(text: string, tokens: Token[], from: number, to: number): string {
  return text.slice(tokens[from]!.start, tokens[to]!.end).trim();
}

function isCueOf(t: Token, cues: Set<string>): boolean {
  return cues.has(t.key) || t.alts.some((a) => cues.has(a));
}

/** The dose after a drug name: a number with a dose unit within a few words, not a concentration (mg/dl). */
function doseAfter(tokens: Token[], i: number): number | undefined {
  let words = 0;
  for (let j = i + 1; j < tokens.length && words < 4; j++) {
    const t = tokens[j]!;
    if (t.kind === "punct" && CLAUSE_END.has(t.surface)) return undefined;
    if (t.kind === "number" && isDoseUnit(t.unitAfter)) {
      const after = tokens[j + 2];
      if (after?.kind === "unit" && !isDoseUnit(after.unit)) return undefined;
      return j;
    }
    if (!t.stop) words++;
  }
  return undefined;
}

function rarest(corpus: Corpus, tokens: Token[], count: number): string[] {
  const n = corpus.segments.length;
  return tokens
    .filter((t) => t.kind === "word" && !t.side && t.key.length >= 3)
    .map((t) => ({ key: t.key, weight: Math.log((n + 1) / ((corpus.df.get(t.key) ?? 0) + 0.5)) }))
    .sort((a, b) => b.weight - a.weight)
    .filter((x, i, all) => all.findIndex((y) => y.key === x.key) === i)
    .slice(0, count)
    .map((x) => x.key);
}

/**
 * An allergy said at segment `index`: the substances named in it, or in the answer when it is a question, and
 * where that was said; `denied` when the answer begins with a no. Undefined when the segment speaks of no allergy.
 */
function allergyAt(corpus: Corpus, index: number) {
  const segment = corpus.segments[index]!;
  if (!segment.tokens.some((t) => isCueOf(t, ALLERGY))) return undefined;
  const answer = segment.question ? corpus.segments[index + 1] : undefined;
  const sources = answer ? [segment, answer] : [segment];
  const substances: string[] = [];
  let denied = false;
  for (const source of sources) {
    source.tokens.forEach((t, i) => {
      const before = source.tokens[i - 1];
      if (isDrugLike(t) || (before && ALLERGY_TARGET_WORDS.has(fold(before.surface)) && t.kind === "word" && !t.stop)) {
        if (!isCueOf(t, ALLERGY)) substances.push(t.key);
      }
    });
    if (source === answer && source.tokens.slice(0, 3).some(isAnswerNo)) denied = true;
  }
  return { substances: [...new Set(substances)], denied, where: answer ?? segment };
}

/** Candidate facts of the consultation, merged when the same thing is said twice. */
export function extractFacts(corpus: Corpus): Fact[] {
  const facts = new Map<string, Fact>();
  const add = (kind: FactKind, terms: string[], text: string, segmentId: string) => {
    if (terms.length === 0) return;
    const id = `${kind}|${[...terms].sort().join(",")}`;
    const known = facts.get(id);
    if (known) {
      if (!known.segmentIds.includes(segmentId)) known.segmentIds.push(segmentId);
    } else facts.set(id, { kind, terms, text, segmentIds: [segmentId] });
  };

  const allergens = new Set<string>();
  corpus.segments.forEach((segment, index) => {
    const allergy = allergyAt(corpus, index);
    for (const substance of allergy?.substances ?? [])
      for (const id of [segment.id, allergy!.where.id]) allergens.add(`${id}|${substance}`);
  });

  corpus.segments.forEach((segment, index) => {
    const tokens = segment.tokens;
    const used = new Set<number>();

    // Medications: a drug-like name, or any word a dose follows ("Nitrospray … 2 Hübe", "Lasix 20 milligrams") —
    // not the substance an allergy is to ("Ja, gegen Penicillin"), which is the allergy's fact.
    tokens.forEach((t, i) => {
      if (t.kind !== "word" || t.stop || allergens.has(`${segment.id}|${t.key}`)) return;
      const dose = doseAfter(tokens, i);
      const named = isDrugLike(t);
      if (!named && (dose === undefined || MEASURES.has(t.key) || t.alts.some((a) => MEASURES.has(a)))) return;
      if (!named && tokens.slice(i + 1, dose).some((u) => u.kind === "word" && !u.stop)) return;
      const [clauseStart, clauseEnd] = clause(tokens, i);
      // A measure named around the amount makes it a value, not a drug: "bleiben 120 Milliliter Restharn", "PSA …
      // lag bei 2,1 Nanogramm pro Milliliter".
      if (
        !named &&
        dose !== undefined &&
        tokens.slice(Math.max(clauseStart, i - 5), Math.min(clauseEnd, dose + 3) + 1).some((u) => isCueOf(u, MEASURES))
      )
        return;
      const end = dose !== undefined ? Math.min(clauseEnd, dose + 4) : Math.min(clauseEnd, i + 5);
      if (dose !== undefined) used.add(dose);
      add("medication", [t.key], textOf(segment.text, tokens, i, end), segment.id);
    });

    // Allergies: the substance named after the question or in the same sentence; "none" counts as a fact too.
    const allergy = allergyAt(corpus, index);
    if (allergy?.substances.length) add("allergy", allergy.substances, allergy.where.text.trim(), allergy.where.id);
    else if (allergy?.denied) add("allergy", ["none"], allergy.where.text.trim(), allergy.where.id);

    // Measured values: a number with a measuring unit, or after a measure's name in the same clause.
    tokens.forEach((t, i) => {
      if (t.kind !== "number" || t.weak || used.has(i) || t.timeAfter) return;
      const [from, to] = clause(tokens, i);
      const unitMeasure = t.unitAfter !== undefined && !isDoseUnit(t.unitAfter) && t.unitAfter !== "min";
      const concentration = isDoseUnit(t.unitAfter) && tokens[i + 2]?.kind === "unit";
      // Named before the number ("Blutdruck 158 zu 94") or right after its unit ("120 Milliliter Restharn").
      const before = tokens.slice(Math.max(from, i - 5), i);
      const afterUnit = tokens.slice(i + 2, Math.min(to, i + 3) + 1);
      const named = [...before, ...afterUnit].some((u) => isCueOf(u, MEASURES));
      if (!unitMeasure && !concentration && !named && t.unitAfter !== "min") return;
      if (t.unitAfter === "min" && !named) return;
      // "158 zu 94", "120 over 80": the pair is one value
      const values = [numberKey(t.value!)];
      const partner = tokens[i + 2];
      if (partner?.kind === "number" && ["zu", "over", "/"].includes(fold(tokens[i + 1]!.surface))) {
        values.push(numberKey(partner.value!));
        used.add(i + 2);
      }
      add("value", values, textOf(segment.text, tokens, Math.max(from, i - 5), Math.min(to, i + 3)), segment.id);
    });

    // Diagnoses said aloud: the rarest words after "Verdacht", "spricht für", "consistent with", "diagnosis".
    tokens.forEach((t, i) => {
      if (!isCueOf(t, DIAGNOSIS_CUES)) return;
      const [, to] = clause(tokens, i);
      const negated = negatedTokens(tokens, { spoken: true });
      const after = tokens.slice(i + 1, to + 1).filter((u, k) => !u.stop && u.kind === "word" && !negated[i + 1 + k]);
      const terms = rarest(corpus, after, 3);
      if (terms.length > 0) add("diagnosis", terms, textOf(segment.text, tokens, i, to), segment.id);
    });

    // What happens next: an interval ("in zwei Wochen", "in three months", "next week") or a planned step.
    tokens.forEach((t, i) => {
      let interval: string | undefined;
      if (t.kind === "number" && t.timeAfter && t.timeAfter !== "hour") {
        const before = tokens.slice(Math.max(0, i - 3), i);
        if (before.some((u) => IN_WORDS.has(fold(u.surface)))) interval = `${numberKey(t.value!)} ${t.timeAfter}`;
      } else if (t.kind === "word" && NEXT_WORDS.has(fold(t.surface))) {
        const time = TIME_WORDS[tokens[i + 1]?.key ?? ""];
        if (time) interval = `1 ${time}`;
      }
      if (interval) {
        const [from, to] = clause(tokens, i);
        add("plan", [interval], textOf(segment.text, tokens, from, to), segment.id);
        return;
      }
      if (!isCueOf(t, PLAN_CUES)) return;
      const [from, to] = clause(tokens, i);
      // A question plans nothing ("Wann soll ich wiederkommen?"); its answer may.
      if (tokens[to + 1]?.surface === "?") return;
      const clauseTokens = tokens.slice(from, to + 1);
      if (clauseTokens.some((u) => u.timeAfter)) return;
      const terms = rarest(
        corpus,
        clauseTokens.filter((u) => u !== t && !u.stop),
        2,
      );
      if (terms.length > 0) add("plan", terms, textOf(segment.text, tokens, from, to), segment.id);
    });
  });
  return [...facts.values()];
}

/** What a letter holds, in the forms facts are compared by. */
export type LetterIndex = {
  keys: Set<string>;
  numbers: Set<string>;
  intervals: Set<string>;
  byPrefix: Map<string, string[]>;
};

export function indexLetter(tokenLists: Token[][]): LetterIndex {
  const keys = new Set<string>();
  const numbers = new Set<string>();
  const intervals = new Set<string>();
  for (const tokens of tokenLists) {
    for (const t of tokens) {
      if (t.kind === "punct") continue;
      keys.add(t.key);
      for (const a of t.alts) keys.add(a);
      for (const p of t.parts) {
        keys.add(p);
        for (const c of conceptsOf(p)) keys.add(c);
      }
      if (t.value !== undefined && (t.kind === "number" || t.kind === "freq")) numbers.add(numberKey(t.value));
      if (t.kind === "scheme") for (const v of t.key.slice(2).split("-")) numbers.add(v);
      if (t.kind === "number" && t.timeAfter) intervals.add(`${numberKey(t.value!)} ${t.timeAfter}`);
      if (t.kind === "word" && NEXT_WORDS.has(fold(t.surface))) {
        const next = tokens[tokens.indexOf(t) + 1];
        const time = TIME_WORDS[next?.key ?? ""];
        if (time) intervals.add(`1 ${time}`);
      }
    }
  }
  const byPrefix = new Map<string, string[]>();
  for (const k of keys) {
    if (k.length < 5 || k.includes(":")) continue;
    const list = byPrefix.get(k.slice(0, 4)) ?? [];
    list.push(k);
    byPrefix.set(k.slice(0, 4), list);
  }
  return { keys, numbers, intervals, byPrefix };
}

function letterHasWord(letter: LetterIndex, key: string): boolean {
  if (letter.keys.has(key)) return true;
  if (conceptsOf(key).some((c) => letter.keys.has(c))) return true;
  if (key.length < 5) return false;
  return (letter.byPrefix.get(key.slice(0, 4)) ?? []).some((k) => k.startsWith(key) || key.startsWith(k));
}

export function isCarried(fact: Fact, letter: LetterIndex, sections: LetterSection[]): boolean {
  switch (fact.kind) {
    case "medication":
      return fact.terms.some((k) => letterHasWord(letter, k));
    case "allergy":
      if (fact.terms[0] === "none") {
        return [...ALLERGY].some((k) => letter.keys.has(k)) || sections.some((s) => fitsSection("allergy", s.title));
      }
      return fact.terms.some((k) => letterHasWord(letter, k));
    case "value":
      return fact.terms.every((v) => letter.numbers.has(v));
    case "plan":
      if (/^\S+ (day|week|month|year)$/.test(fact.terms[0]!)) return letter.intervals.has(fact.terms[0]!);
      return fact.terms.filter((k) => letterHasWord(letter, k)).length * 2 >= fact.terms.length;
    case "diagnosis":
      return fact.terms.filter((k) => letterHasWord(letter, k)).length * 2 >= fact.terms.length;
  }
}

/** The section a fact of this kind belongs in, by the section titles' words. */
/**
 * The section a missing fact belongs in: the one with the closest name, and among equally close ones the first that
 * says "Keine Informationen gefunden" — the template's place for it, left empty — else the first.
 */
export function sectionFor(kind: FactKind, sections: LetterSection[]): string | null {
  for (const pattern of SECTION_PATTERNS[kind]) {
    const fitting = sections.filter((s) => pattern.test(s.title));
    const chosen = fitting.find((s) => isNoInformation(s.text)) ?? fitting[0];
    if (chosen) return chosen.title;
  }
  return null;
}

export function findOmissions(
  corpus: Corpus,
  sections: LetterSection[],
  letter: LetterIndex,
): { omissions: Omission[]; emptySections: EmptySection[] } {
  const facts = extractFacts(corpus);
  const omissions = facts
    .filter((f) => !isCarried(f, letter, sections))
    .map((f) => ({ ...f, section: sectionFor(f.kind, sections) }));
  const emptySections: EmptySection[] = [];
  for (const section of sections) {
    if (!isNoInformation(section.text)) continue;
    for (const kind of Object.keys(SECTION_PATTERNS) as FactKind[]) {
      if (!fitsSection(kind, section.title)) continue;
      // Another section of this kind says something ("Medikation" beside an empty "Therapie"): the letter speaks of it.
      if (sections.some((s) => s !== section && !isNoInformation(s.text) && fitsSection(kind, s.title))) continue;
      const ofKind = facts.filter((f) => f.kind === kind && !(f.kind === "allergy" && f.terms[0] === "none"));
      if (ofKind.length > 0)
        emptySections.push({
          section: section.title,
          kind,
          segmentIds: [...new Set(ofKind.flatMap((f) => f.segmentIds))],
        });
    }
  }
  return { omissions, emptySections };
}
