// Text → tokens for the evidence checker (issue 24). A letter and a transcript say the same thing in different
// words: the letter writes "RR 158/94 mmHg" and "Ramipril 5 mg 1-0-0", the doctor said "Blutdruck 158 zu 94" and
// "Ramipril fünf Milligramm morgens". Matching needs both reduced to the same keys: case and umlauts folded
// ("Ruecken" = "Rücken"), endings stripped, number words as digits, units and abbreviations canonical, dosing
// schemes as the times of day they mean, and words of one meaning (lexicon.ts) under one concept id.
// Every token keeps its span in the original text, so a flag can point at the letter's words.
// Pure and synchronous: the same function runs on the server and, later, in the editor.

import {
  ABBREVIATIONS,
  ANSWER_NO,
  ANSWER_YES,
  CONTRAST_WORDS,
  DOSE_UNITS,
  DRUG_NAMES,
  DRUG_SUFFIXES,
  FRAME_WORDS,
  MONTHS,
  NEGATION_CUES,
  NUMBER_TEENS_DE,
  NUMBER_TENS_DE,
  NUMBER_UNITS_DE,
  NUMBER_WORDS_EN,
  ORDINALS_DE,
  PHRASE_UNITS,
  SIDE_WORDS,
  STOPWORDS_DE,
  STOPWORDS_EN,
  SYNONYM_GROUPS,
  TIME_UNITS,
  UNITS,
} from "./lexicon";

export type Side = "left" | "right" | "both";
export type TokenKind = "word" | "number" | "unit" | "scheme" | "freq" | "date" | "punct";
export type DateValue = { day: number; month: number; year?: number };

export type Token = {
  surface: string;
  start: number;
  end: number;
  kind: TokenKind;
  /** What the token is compared by: a stem, "12.5" for a number, "u:mg" for a unit, "s:1-0-1", "f:2", "d:4.11". */
  key: string;
  /** Other keys the token also counts as: concept ids ("c:12"), an abbreviation's own form, a scheme's times. */
  alts: string[];
  /** Keys that together stand for the token (an abbreviation's expansion, a compound's parts). */
  parts: string[];
  stop: boolean;
  negation: boolean;
  value?: number;
  /** A number that may be an article ("ein Ausschlag"): used as evidence, never checked as a claim. */
  weak?: boolean;
  /** Spelled out in words ("fünf"), which matters for spoken dosing schemes ("eins null eins"). */
  spoken?: boolean;
  side?: Side;
  date?: DateValue;
  unit?: string;
  /** For a number: the unit right after it ("5 mg" → "mg"). */
  unitAfter?: string;
  /** For a number: the time unit after it ("in zwei Wochen" → "week"). */
  timeAfter?: string;
};

function words(list: string): string[] {
  return list.split(/\s+/).filter(Boolean);
}

/** Lower case, umlauts as two letters (ä→ae), ß→ss, other accents dropped: "Rücken" and "Ruecken" alike. */
export function fold(text: string): string {
  const cached = FOLDED.get(text);
  if (cached !== undefined) return cached;
  const folded = foldUncached(text);
  // Words repeat across a consultation; a bounded memo keeps tokenizing a long one fast.
  if (FOLDED.size > 50_000) FOLDED.clear();
  FOLDED.set(text, folded);
  return folded;
}

const FOLDED = new Map<string, string>();

function foldUncached(text: string): string {
  return text
    .toLowerCase()
    .replace(/ä/g, "ae")
    .replace(/ö/g, "oe")
    .replace(/ü/g, "ue")
    .replace(/ß/g, "ss")
    .replace(/[’`´]/g, "'")
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/µ/g, "µ");
}

// German alternates umlaut and plain vowel within one word family (Druck / drücken, Harn / Hämaturie is not one,
// but Übelkeit / übel is): the match form drops the umlaut's e, on both sides alike.
function matchForm(folded: string): string {
  return folded.replace(/ae/g, "a").replace(/oe/g, "o").replace(/ue/g, "u");
}

const ENDINGS = ["ing", "ies", "ied", "ern", "ed", "ly", "em", "en", "er", "es", "e", "n", "s"];
const MIN_STEM = 3;

/**
 * Light stemming for German and English inflection: one common ending off, the stem kept at least three
 * letters. Not linguistics: both sides are cut by the same rule, so "Schmerzen"/"Schmerz" and
 * "knees"/"knee" meet.
 */
export function stem(form: string): string {
  if (form.length <= MIN_STEM || /\d/.test(form)) return form;
  for (const ending of ENDINGS) {
    if (!form.endsWith(ending) || form.length - ending.length < MIN_STEM) continue;
    const rest = form.slice(0, -ending.length);
    // "Prozess", "stress", "status": a final s after s or u belongs to the word.
    if (ending === "s" && /[su]$/.test(rest)) return form;
    if (ending === "ies" || ending === "ied") return `${rest}y`;
    return rest;
  }
  return form;
}

/** The key a word is compared by. */
export function wordKey(word: string): string {
  return stem(matchForm(fold(word)));
}

const STOPWORDS = new Set([...words(STOPWORDS_DE), ...words(STOPWORDS_EN)].map(fold));
const FRAMES = new Set(words(FRAME_WORDS).map(wordKey));
const NEGATIONS = new Set(words(NEGATION_CUES).map(fold));
const CONTRASTS = new Set(words(CONTRAST_WORDS).map(fold));
const ANSWERS_NO = new Set(words(ANSWER_NO).map(fold));
const ANSWERS_YES = new Set(words(ANSWER_YES).map(fold));
const UNIT_FORMS = new Map<string, string>();
for (const [unit, forms] of Object.entries(UNITS)) for (const form of forms) UNIT_FORMS.set(fold(form), unit);
const NUMBER_EN = new Map(Object.entries(NUMBER_WORDS_EN));
const ORDINALS = new Map(Object.entries(ORDINALS_DE));
const MONTH_FORMS = new Map(Object.entries(MONTHS));
const SIDES = new Map(Object.entries(SIDE_WORDS).map(([w, s]) => [fold(w), s]));
const DRUG_NAME_KEYS = new Set(words(DRUG_NAMES).map(wordKey));
const DRUG_SUFFIX_FORMS = DRUG_SUFFIXES.map((s) => matchForm(fold(s)));

export function isStopword(folded: string): boolean {
  return STOPWORDS.has(folded);
}
/** A word that frames a statement ("History of …", "Befund: …") rather than makes it (lexicon.ts FRAME_WORDS). */
export function isFrameWord(token: Token): boolean {
  return token.kind === "word" && FRAMES.has(token.key);
}
export function isContrast(token: Token): boolean {
  return token.kind === "word" && CONTRASTS.has(fold(token.surface));
}
export function isAnswerNo(token: Token): boolean {
  return ANSWERS_NO.has(fold(token.surface));
}
export function isAnswerYes(token: Token): boolean {
  return ANSWERS_YES.has(fold(token.surface));
}

/** A generic drug name by its INN stem, or a common drug named without one. */
export function isDrugLike(token: Token): boolean {
  if (token.kind !== "word" || token.stop) return false;
  const form = matchForm(fold(token.surface));
  if (DRUG_NAME_KEYS.has(token.key)) return true;
  if (form.length < 6) return false;
  return DRUG_SUFFIX_FORMS.some((suffix) => form.endsWith(suffix) && form.length - suffix.length >= 3);
}

// ---- Number words ------------------------------------------------------------------------------------------

/** German number words written together: "einundzwanzig" → 21, "zweihundertvierzig" → 240. */
function parseGermanNumber(word: string): number | undefined {
  if (!word) return undefined;
  const thousand = word.indexOf("tausend");
  if (thousand >= 0) {
    const head = word.slice(0, thousand);
    const multiplier = head ? parseGermanNumber(head) : 1;
    const rest = word.slice(thousand + 7);
    const tail = rest ? parseGermanNumber(rest.replace(/^und/, "")) : 0;
    return multiplier === undefined || tail === undefined ? undefined : multiplier * 1000 + tail;
  }
  const hundred = word.indexOf("hundert");
  if (hundred >= 0) {
    const head = word.slice(0, hundred);
    const multiplier = head ? parseGermanNumber(head) : 1;
    const rest = word.slice(hundred + 7);
    const tail = rest ? parseGermanNumber(rest.replace(/^und/, "")) : 0;
    return multiplier === undefined || tail === undefined ? undefined : multiplier * 100 + tail;
  }
  if (word in NUMBER_TEENS_DE) return NUMBER_TEENS_DE[word];
  if (word in NUMBER_TENS_DE) return NUMBER_TENS_DE[word];
  if (word in NUMBER_UNITS_DE) return NUMBER_UNITS_DE[word];
  const and = word.indexOf("und");
  if (and > 0) {
    const unit = NUMBER_UNITS_DE[word.slice(0, and)];
    const tens = NUMBER_TENS_DE[word.slice(and + 3)];
    if (unit !== undefined && tens !== undefined) return tens + unit;
  }
  return undefined;
}

const ARTICLES_ONE = new Set(["ein", "eine", "einen", "einem", "einer", "eines", "a", "an"]);
const FREQUENCY_WORDS: Record<string, number> = { once: 1, twice: 2, thrice: 3 };
const TIMES_WORDS = new Set(["mal", "times", "x"]);

type NumberReading = { value: number; weak?: boolean; freq?: boolean };

function readNumberWord(folded: string): NumberReading | undefined {
  if (ARTICLES_ONE.has(folded)) return { value: 1, weak: true };
  if (folded in FREQUENCY_WORDS) return { value: FREQUENCY_WORDS[folded]!, freq: true };
  const en = NUMBER_EN.get(folded);
  if (en !== undefined) return { value: en };
  // "zweimal", "drei-mal" (hyphen already split), "einmal"
  if (folded.endsWith("mal") && folded.length > 3) {
    const head = folded.slice(0, -3);
    const value = head === "ein" ? 1 : parseGermanNumber(head);
    if (value !== undefined) return { value, freq: true };
  }
  const de = parseGermanNumber(folded);
  if (de !== undefined) return { value: de };
  // Ordinals: "vierten", "dritte", "zwanzigsten"
  const ordinal = folded.match(/^(.+?)(?:ste|sten|stem|ster|te|ten|tem|ter)$/);
  if (ordinal) {
    const base = ORDINALS.get(folded.replace(/(?:e|en|em|er)$/, "")) ?? parseGermanNumber(ordinal[1]!);
    if (base !== undefined) return { value: base };
  }
  return undefined;
}

function parseDigits(text: string): number {
  return Number(text.replace(",", "."));
}

/** Canonical text of a number: "2,5" and "2.50" both "2.5". */
export function numberKey(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

// ---- Tokenizer -------------------------------------------------------------------------------------------------

const PATTERNS: Array<
  [RegExp, "abbr" | "date" | "iso" | "slashdate" | "scheme" | "number" | "word" | "sym" | "punct"]
> = [
  [/\d{4}-\d{2}-\d{2}(?!\d)/y, "iso"],
  [/\d{1,2}\/\d{1,2}\/\d{2,4}(?!\d)/y, "slashdate"],
  [/\d{1,2}\.\d{1,2}\.(?:\d{4}|\d{2}(?!\d))?/y, "date"],
  [/(?:\d|½)(?:[.,]\d+)?(?:[ \t]?[-–][ \t]?(?:\d|½)(?:[.,]\d+)?){2,3}(?![\d–-])/y, "scheme"],
  [/\d+(?:[.,]\d+)?/y, "number"],
  [/(?:\p{L}{1,6}\.){1,3}(?:\p{L}{1,6}\.?)?/uy, "abbr"],
  [/[\p{L}\p{N}]+(?:'[\p{L}]+)*/uy, "word"],
  [/°\s?[CcFf]\b|%|°/y, "sym"],
  [/[.,;:!?()\n]/y, "punct"],
];

type Raw = { text: string; start: number; end: number; type: (typeof PATTERNS)[number][1]; joined: boolean };

function scan(text: string): Raw[] {
  const raws: Raw[] = [];
  let i = 0;
  const source = text.replace(/[’´`]/g, "'");
  while (i < source.length) {
    let matched = false;
    for (const [pattern, type] of PATTERNS) {
      pattern.lastIndex = i;
      const m = pattern.exec(source);
      if (!m || !m[0]) continue;
      if (type === "abbr" && !(fold(m[0]) in ABBREVIATIONS_FOLDED)) continue;
      // "COVID-19", "V4", "Typ-2": a number glued to a word by a hyphen is part of a name, not a value.
      const label = type === "number" && source[i - 1] === "-" && /\p{L}/u.test(source[i - 2] ?? "");
      const end = i + m[0].length;
      raws.push({
        text: m[0],
        start: i,
        end,
        type: label ? "word" : type,
        joined: source[end] === "-" && /\p{L}/u.test(source[end + 1] ?? ""),
      });
      i = end;
      matched = true;
      break;
    }
    if (!matched) i++;
  }
  return raws;
}

const ABBREVIATIONS_FOLDED: Record<string, string> = Object.fromEntries(
  Object.entries(ABBREVIATIONS).map(([k, v]) => [fold(k), v]),
);

function bare(surface: string, start: number, end: number, kind: TokenKind, key: string): Token {
  return { surface, start, end, kind, key, alts: [], parts: [], stop: false, negation: false };
}

const UNIT_WITH_NUMBER = /^(\d+(?:[.,]\d+)?)(st|nd|rd|th|x|[a-zµ]+)$/i;

function wordToken(raw: Raw, expand: boolean): Token[] {
  const folded = fold(raw.text);
  const glued = raw.text.match(UNIT_WITH_NUMBER);
  if (glued) {
    const value = parseDigits(glued[1]!);
    const suffix = fold(glued[2]!);
    const numberEnd = raw.start + glued[1]!.length;
    const number = { ...bare(glued[1]!, raw.start, numberEnd, "number", numberKey(value)), value };
    if (["st", "nd", "rd", "th"].includes(suffix)) return [number];
    if (suffix === "x") return [{ ...number, kind: "freq", key: `f:${numberKey(value)}` }];
    const unit = UNIT_FORMS.get(suffix);
    if (unit) return [number, { ...bare(glued[2]!, numberEnd, raw.end, "unit", `u:${unit}`), unit }];
  }
  // An abbreviation counts when written as one (upper case or dotted); "des" and "er" are German words.
  const isUpper = raw.text.length >= 2 && raw.text === raw.text.toUpperCase() && /\p{Lu}/u.test(raw.text);
  const expansion = ABBREVIATIONS_FOLDED[folded];
  if (expansion && expand && (raw.type === "abbr" || isUpper || raw.text.includes("/"))) {
    const token = bare(raw.text, raw.start, raw.end, "word", wordKey(raw.text.replace(/\./g, "")));
    const expanded = tokenize(expansion, { annotate: false, expand: false }).filter(
      (t) => !t.stop && t.kind !== "punct",
    );
    token.parts = expanded.map((t) => t.key);
    if (expanded.length === 1) {
      const only = expanded[0]!;
      token.side = only.side;
      token.alts.push(only.key);
      if (only.kind === "freq") Object.assign(token, { kind: "freq", key: only.key, value: only.value });
    }
    token.negation = expanded.some((t) => t.negation);
    return [token];
  }
  const unit = UNIT_FORMS.get(folded);
  if (unit && (folded.length > 1 || /^[lgh]$/.test(folded))) {
    return [{ ...bare(raw.text, raw.start, raw.end, "unit", `u:${unit}`), unit }];
  }
  const reading = readNumberWord(folded);
  if (reading) {
    const token: Token = {
      ...bare(raw.text, raw.start, raw.end, reading.freq ? "freq" : "number", ""),
      value: reading.value,
      spoken: true,
      weak: reading.weak,
    };
    token.key = reading.freq ? `f:${numberKey(reading.value)}` : numberKey(reading.value);
    return [token];
  }
  const token = bare(raw.text, raw.start, raw.end, "word", wordKey(raw.text));
  token.stop = STOPWORDS.has(folded) || (folded.length === 1 && !/\d/.test(folded));
  token.negation = NEGATIONS.has(folded) || folded.endsWith("n't");
  // "Nicht-ST-Hebungsinfarkt" names a kind of infarct; it negates nothing.
  if (raw.joined) token.negation = false;
  if (token.negation) token.stop = true;
  token.side = SIDES.get(folded);
  return [token];
}

function rawToTokens(raw: Raw, expand: boolean): Token[] {
  switch (raw.type) {
    case "iso": {
      const [y, m, d] = raw.text.split("-").map(Number);
      return [dateToken(raw, { day: d!, month: m!, year: y })];
    }
    case "slashdate": {
      // Letters in English write month/day; the check compares day and month either way round.
      const [a, b, y] = raw.text.split("/").map(Number);
      return [dateToken(raw, { day: b!, month: a!, year: y! < 100 ? 2000 + y! : y })];
    }
    case "date": {
      const [d, m, y] = raw.text.split(".");
      const year = y ? Number(y) : undefined;
      return [dateToken(raw, { day: Number(d), month: Number(m), year: year && year < 100 ? 2000 + year : year })];
    }
    case "scheme": {
      const values = raw.text.split(/[-–]/).map((v) => (v.trim() === "½" ? 0.5 : parseDigits(v.trim())));
      return [schemeToken(raw.text, raw.start, raw.end, values)];
    }
    case "number": {
      const value = parseDigits(raw.text);
      return [{ ...bare(raw.text, raw.start, raw.end, "number", numberKey(value)), value }];
    }
    case "abbr":
    case "word":
      return wordToken(raw, expand);
    case "sym": {
      const unit = raw.text.startsWith("°") ? (/[fF]/.test(raw.text) ? "°f" : "°c") : "%";
      return [{ ...bare(raw.text, raw.start, raw.end, "unit", `u:${unit}`), unit }];
    }
    case "punct":
      return [{ ...bare(raw.text, raw.start, raw.end, "punct", raw.text), stop: true }];
  }
}

function dateToken(raw: Raw, date: DateValue): Token {
  return { ...bare(raw.text, raw.start, raw.end, "date", `d:${date.day}.${date.month}`), date };
}

const TIMES_OF_DAY = ["morgens", "mittags", "abends", "nachts"].map((w) => wordKey(w));

/** "1-0-1": morning and evening, twice a day; the keys it implies let it meet "morgens und abends". */
function schemeToken(surface: string, start: number, end: number, values: number[]): Token {
  const token = bare(surface, start, end, "scheme", `s:${values.map(numberKey).join("-")}`);
  const times = values.filter((v) => v > 0).length;
  token.alts.push(`f:${times}`);
  values.forEach((v, i) => {
    if (v > 0 && TIMES_OF_DAY[i]) token.alts.push(TIMES_OF_DAY[i]!);
  });
  token.alts.push(wordKey("täglich"));
  token.value = times;
  return token;
}

// ---- Post-passes ------------------------------------------------------------------------------------------------

function merge(tokens: Token[], from: number, to: number, replacement: Token): void {
  tokens.splice(from, to - from + 1, replacement);
}

function span(tokens: Token[], from: number, to: number, text: string): Pick<Token, "surface" | "start" | "end"> {
  const start = tokens[from]!.start;
  const end = tokens[to]!.end;
  return { surface: text.slice(start, end), start, end };
}

function combineNumbers(tokens: Token[], text: string): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    const after = tokens[i + 2];
    if (t.kind !== "number" || !next) continue;
    // "twenty five", "one hundred twenty": spoken English numbers in several words
    if (t.spoken && next.kind === "number" && next.spoken && !t.weak) {
      let value: number | undefined;
      if (next.value === 100 || next.value === 1000) value = t.value! * next.value;
      else if (t.value! >= 20 && t.value! % 10 === 0 && t.value! < 100 && next.value! < 10)
        value = t.value! + next.value!;
      else if (t.value! >= 100 && t.value! % 100 === 0 && next.value! < 100) value = t.value! + next.value!;
      if (value !== undefined) {
        merge(tokens, i, i + 1, { ...t, ...span(tokens, i, i + 1, text), value, key: numberKey(value) });
        i--;
        continue;
      }
    }
    // "zwei Komma fünf", "two point five"
    const f = fold(next.surface);
    if ((f === "komma" || f === "point") && after?.kind === "number" && !t.weak) {
      const value = Number(`${t.value}.${String(after.value).replace(".", "")}`);
      merge(tokens, i, i + 2, { ...t, ...span(tokens, i, i + 2, text), value, key: numberKey(value), spoken: false });
      continue;
    }
    // "zwei mal", "3 times", "3x"
    if (TIMES_WORDS.has(f) && !t.weak) {
      merge(tokens, i, i + 1, { ...t, ...span(tokens, i, i + 1, text), kind: "freq", key: `f:${t.key}` });
    }
  }
}

/** "eins null eins" as dictated: three or four spoken numbers of 0, ½, 1 or 2 in a row are a dosing scheme. */
function spokenSchemes(tokens: Token[], text: string): void {
  for (let i = 0; i < tokens.length; i++) {
    let j = i;
    while (j < tokens.length && j - i < 4) {
      const t = tokens[j]!;
      if (t.kind !== "number" || !t.spoken || ![0, 0.5, 1, 2].includes(t.value!)) break;
      j++;
    }
    if (j - i >= 3 && tokens.slice(i, j).some((t) => t.value === 0)) {
      const values = tokens.slice(i, j).map((t) => t.value!);
      const s = span(tokens, i, j - 1, text);
      merge(tokens, i, j - 1, schemeToken(s.surface, s.start, s.end, values));
    }
  }
}

function phraseUnits(tokens: Token[], text: string): void {
  for (const [phrase, unit] of PHRASE_UNITS) {
    const parts = phrase.split(" ");
    for (let i = 0; i + parts.length <= tokens.length; i++) {
      if (parts.every((p, k) => matchForm(fold(tokens[i + k]!.surface)) === matchForm(p))) {
        const s = span(tokens, i, i + parts.length - 1, text);
        merge(tokens, i, i + parts.length - 1, { ...bare(s.surface, s.start, s.end, "unit", `u:${unit}`), ...s, unit });
      }
    }
  }
}

/** "4. November", "am vierten November 2025", "November 4th", "March 14, 1951". */
function dates(tokens: Token[], text: string): void {
  const month = (t: Token | undefined) => (t?.kind === "word" ? MONTH_FORMS.get(fold(t.surface)) : undefined);
  const day = (t: Token | undefined) =>
    t?.kind === "number" && Number.isInteger(t.value) && t.value! >= 1 && t.value! <= 31 && !t.weak
      ? t.value
      : undefined;
  const year = (t: Token | undefined) =>
    t?.kind === "number" && Number.isInteger(t.value) && t.value! >= 1900 && t.value! <= 2100 ? t.value : undefined;
  for (let i = 0; i < tokens.length; i++) {
    const d = day(tokens[i]);
    if (d !== undefined) {
      let j = i + 1;
      if (tokens[j]?.surface === ".") j++;
      const m = month(tokens[j]);
      if (m !== undefined) {
        const y = year(tokens[j + 1]);
        const last = y !== undefined ? j + 1 : j;
        const s = span(tokens, i, last, text);
        merge(tokens, i, last, {
          ...bare(s.surface, s.start, s.end, "date", `d:${d}.${m}`),
          date: { day: d, month: m, year: y },
        });
        continue;
      }
    }
    const m = month(tokens[i]);
    const after = day(tokens[i + 1]);
    if (m !== undefined && after !== undefined && tokens[i]!.surface.length > 3) {
      let last = i + 1;
      let y: number | undefined;
      const maybeYear = tokens[i + 2]?.surface === "," ? tokens[i + 3] : tokens[i + 2];
      if (year(maybeYear) !== undefined) {
        y = maybeYear!.value;
        last = tokens.indexOf(maybeYear!);
      }
      const s = span(tokens, i, last, text);
      merge(tokens, i, last, {
        ...bare(s.surface, s.start, s.end, "date", `d:${after}.${m}`),
        date: { day: after, month: m, year: y },
      });
    }
  }
}

/** Which unit or time word follows each number (skipping "/", "pro", "per"). */
function unitsAfterNumbers(tokens: Token[]): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== "number") continue;
    const next = tokens[i + 1];
    if (next?.kind === "unit") t.unitAfter = next.unit;
    else if (next?.kind === "word") {
      const time = TIME_UNITS[fold(next.surface)];
      if (time) t.timeAfter = time;
    }
  }
}

// ---- Concepts ---------------------------------------------------------------------------------------------------

type Phrase = { keys: string[]; concept: string };
const CONCEPT_OF = new Map<string, string[]>();
const PHRASES: Phrase[] = [];
/** Concept members long enough to be recognised at the end of a compound ("Belastungsdyspnoe"). */
const CONCEPT_TAILS: Array<[string, string]> = [];

SYNONYM_GROUPS.forEach((group, index) => {
  const concept = `c:${index}`;
  for (const member of group) {
    const keys = tokenize(member, { annotate: false })
      .filter((t) => !t.stop && t.kind !== "punct")
      .map((t) => t.key);
    if (keys.length === 0) continue;
    if (keys.length === 1) {
      const key = keys[0]!;
      CONCEPT_OF.set(key, [...(CONCEPT_OF.get(key) ?? []), concept]);
      if (key.length >= 6) CONCEPT_TAILS.push([key, concept]);
    } else PHRASES.push({ keys, concept });
  }
});

/** Single-word members of the concept groups, so compounds can be split at them ("Belastungs|dyspnoe"). */
export const CONCEPT_MEMBER_KEYS: ReadonlySet<string> = new Set(CONCEPT_OF.keys());

export function conceptsOf(key: string): string[] {
  return CONCEPT_OF.get(key) ?? [];
}

const PHRASES_BY_FIRST = new Map<string, Phrase[]>();
for (const phrase of PHRASES) {
  const list = PHRASES_BY_FIRST.get(phrase.keys[0]!) ?? [];
  list.push(phrase);
  PHRASES_BY_FIRST.set(phrase.keys[0]!, list);
}
const TAIL_CONCEPTS = new Map<string, string[]>();

/** Concepts of a compound that ends in a group's word, looked up once per key. */
function tailConcepts(key: string): string[] {
  let found = TAIL_CONCEPTS.get(key);
  if (found === undefined) {
    found = [];
    for (const [tail, concept] of CONCEPT_TAILS) if (key.endsWith(tail) && key !== tail) found.push(concept);
    if (TAIL_CONCEPTS.size > 50_000) TAIL_CONCEPTS.clear();
    TAIL_CONCEPTS.set(key, found);
  }
  return found;
}

/** Concept ids for words of a group and for a compound ending in one ("Belastungsdyspnoe" → Dyspnoe). */
function concepts(tokens: Token[]): void {
  for (const t of tokens) {
    if (t.kind !== "word" || t.stop) continue;
    const own = [...conceptsOf(t.key), ...t.alts.flatMap((a) => conceptsOf(a))];
    if (own.length === 0 && t.key.length >= 9) own.push(...tailConcepts(t.key));
    for (const c of own) if (!t.alts.includes(c)) t.alts.push(c);
  }
  const content = tokens.filter((t) => !t.stop && t.kind !== "punct");
  content.forEach((first, i) => {
    const starting = [first.key, ...first.alts].flatMap((k) => PHRASES_BY_FIRST.get(k) ?? []);
    for (const phrase of starting) {
      if (i + phrase.keys.length > content.length) continue;
      if (!phrase.keys.every((k, j) => content[i + j]!.key === k || content[i + j]!.alts.includes(k))) continue;
      for (let j = 0; j < phrase.keys.length; j++) {
        const t = content[i + j]!;
        if (!t.alts.includes(phrase.concept)) t.alts.push(phrase.concept);
      }
    }
  });
}

// ---- Entry ------------------------------------------------------------------------------------------------------

/**
 * The tokens of a text with their spans. `annotate: false` skips concepts (used while the concept table itself
 * is built from the lexicon); `expand: false` leaves abbreviations as words (used to read their expansions).
 */
export function tokenize(text: string, options: { annotate?: boolean; expand?: boolean } = {}): Token[] {
  const tokens = scan(text).flatMap((raw) => rawToTokens(raw, options.expand !== false));
  phraseUnits(tokens, text);
  combineNumbers(tokens, text);
  spokenSchemes(tokens, text);
  dates(tokens, text);
  unitsAfterNumbers(tokens);
  if (options.annotate !== false) concepts(tokens);
  return tokens;
}

/** Tokens that carry meaning: not stopwords, not punctuation, not negation cues. */
export function contentTokens(tokens: Token[]): Token[] {
  return tokens.filter((t) => !t.stop && t.kind !== "punct");
}

export function isDoseUnit(unit: string | undefined): boolean {
  return unit !== undefined && DOSE_UNITS.has(unit);
}

export { matchForm };
