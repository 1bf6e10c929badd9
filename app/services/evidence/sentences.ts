// A letter section cut into the claims a doctor verifies one by one (issue 24). German letters are dense with
// dots that end nothing: "Z.n. PCI", "V.a. KHK", "z.B.", "Dr. Weber", "1,5 mg", "am 12.03.2026", "am 4. November".
// A cut there would check half a claim. Semicolons separate list items in letters ("ASS 100 mg 1-0-0; Ticagrelor
// …"), each a claim of its own, and every line of a bulleted list is one.

import { MONTHS } from "./lexicon";
import { fold } from "./normalise";

export type SentenceSpan = { start: number; end: number; text: string };

/** Words that end with a dot and never end a sentence (folded, without the dot). */
const NO_END = new Set(
  (
    "z.b z.n v.a b.b o.b u.a d.h i.v p.o s.c u.u z.t v.a.w ca bzw ggf evtl usw inkl max min mind ggü gem " +
    "dr prof med dipl hr fr nr st li re bds tgl chr akt pat j mon wo std vgl s.o s.u o.g sog " +
    "mr mrs ms e.g i.e approx vs etc no fig jr sr st"
  ).split(" "),
);
const MONTH_WORDS = new Set(Object.keys(MONTHS));
const DATE_PREPOSITIONS = new Set(["am", "vom", "bis", "zum", "den", "dem", "seit", "ab", "on", "the"]);

// Scanned by hand rather than by a regular expression on a slice: a letter has hundreds of dots.
function wordBefore(text: string, index: number): string {
  let from = index;
  while (from > 0 && /[\p{L}\p{N}.]/u.test(text[from - 1]!)) from--;
  return text.slice(from, index);
}

function wordAfter(text: string, index: number): string {
  let from = index;
  while (from < text.length && /\s/.test(text[from]!)) from++;
  let to = from;
  while (to < text.length && /[\p{L}\p{N}]/u.test(text[to]!)) to++;
  return text.slice(from, to);
}

/** Whether the dot at `index` ends a sentence. */
function endsSentence(text: string, index: number): boolean {
  const next = text[index + 1];
  if (next !== undefined && !/\s/.test(next)) return false; // 1,5 · 12.03.2026 · z.B. inside a word
  const before = wordBefore(text, index + 1).replace(/\.$/, "");
  if (NO_END.has(fold(before))) return false;
  // A single letter and a dot is an initial or an abbreviation ("Gertrud W. Weber").
  if (/^\p{L}$/u.test(before)) return false;
  const after = wordAfter(text, index + 1);
  if (!after) return true;
  // "am 4. November", "seit dem 3. Tag": a day number before a month or a lower-case word is an ordinal.
  if (/^\d{1,2}$/.test(before)) {
    if (MONTH_WORDS.has(fold(after))) return false;
    const preceding = wordBefore(text, index - before.length).toLowerCase();
    if (DATE_PREPOSITIONS.has(preceding) || /^\p{Ll}/u.test(after)) return false;
  }
  return true;
}

/** The sentences of `text` with their offsets, trimmed, bullets dropped; empty pieces are skipped. */
export function splitSentences(text: string): SentenceSpan[] {
  const spans: SentenceSpan[] = [];
  let start = 0;
  const push = (end: number) => {
    let s = start;
    let e = end;
    while (s < e && /[\s•*·\-–]/.test(text[s]!)) s++;
    while (e > s && /\s/.test(text[e - 1]!)) e--;
    if (e > s && /[\p{L}\p{N}]/u.test(text.slice(s, e))) spans.push({ start: s, end: e, text: text.slice(s, e) });
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\n") {
      push(i);
      start = i + 1;
    } else if (c === ";" || ((c === "!" || c === "?") && /\s|$/.test(text[i + 1] ?? " "))) {
      push(i + 1);
      start = i + 1;
    } else if (c === "." && endsSentence(text, i)) {
      push(i + 1);
      start = i + 1;
    }
  }
  push(text.length);
  return spans;
}
