import type { EngineWord } from "../speech/types";

// SPEC §3 "Live transcript record" → the words every engine hands to transcript-format.ts, so a live transcript
// is stored in the same shape as a batch one. The record comes from the browser (or the live session store), so
// nothing in it is trusted beyond its text, times and labels: a segment may be a single word, a punctuation mark
// or a whole phrase, and speakers may be missing or "UU" (Speechmatics' unknown speaker).

export type LiveSegment = {
  type?: "word" | "punctuation";
  start_time: number;
  end_time: number;
  is_eos?: boolean;
  attaches_to?: "previous" | "next" | "both" | "none";
  alternatives: Array<{ content: string; speaker?: string | null; confidence?: number | null }>;
};

/** Confidence of a word whose engine gave none: nothing is flagged for review that no engine doubted. */
export const DEFAULT_CONFIDENCE = 1;

const PUNCTUATION_ONLY = /^[\p{P}\p{S}]+$/u;
const SENTENCE_END = /[.!?…]$/;
// Trailing marks of a token inside a phrase segment ("Tag," "geht's?"), split off as punctuation words.
const TRAILING_MARKS = /^(.*?[^\p{P}\p{S}])([.,;:!?…]+)$/u;
const SPEAKER_LABEL = /^[A-Za-z0-9_-]{1,20}$/;

function speakerOf(raw: string | null | undefined, previous: string | null): string | null {
  const label = typeof raw === "string" ? raw.trim() : "";
  if (!label || label === "UU" || !SPEAKER_LABEL.test(label)) return previous;
  return label;
}

function confidenceOf(raw: number | null | undefined) {
  return typeof raw === "number" && Number.isFinite(raw) ? Math.min(1, Math.max(0, raw)) : DEFAULT_CONFIDENCE;
}

/** Tokens of a phrase with their share of the segment's time, by length (longer words take longer to say). */
function spread(tokens: string[], start: number, end: number) {
  const weights = tokens.map((t) => t.length + 1);
  const total = weights.reduce((a, b) => a + b, 0);
  let at = start;
  return tokens.map((text, i) => {
    const length = ((end - start) * weights[i]!) / total;
    const slot = { text, start: at, end: i === tokens.length - 1 ? end : at + length };
    at = slot.end;
    return slot;
  });
}

export function liveResultsToWords(results: LiveSegment[]): EngineWord[] {
  const words: EngineWord[] = [];
  let speaker: string | null = null;
  // An opening mark ("„", "(") that attaches to the word after it.
  let prefix = "";

  const pushMark = (text: string, time: number, confidence: number, endOfSentence?: boolean) => {
    const previous = words[words.length - 1];
    // Punctuation before any word has nothing to attach to.
    if (!previous) return;
    words.push({
      text,
      start: Math.max(previous.end, time),
      end: Math.max(previous.end, time),
      confidence,
      speaker: previous.speaker,
      punctuation: true,
      endOfSentence: endOfSentence ?? SENTENCE_END.test(text),
    });
  };

  for (const result of results) {
    const alternative = result.alternatives[0];
    const content = alternative?.content.trim() ?? "";
    if (!alternative || !content) continue;
    const start = Math.max(0, result.start_time);
    const end = Math.max(start, result.end_time);
    const confidence = confidenceOf(alternative.confidence);
    if (result.type === "punctuation" || PUNCTUATION_ONLY.test(content)) {
      if (result.attaches_to === "next") prefix += content;
      else pushMark(content, start, confidence, result.is_eos);
      continue;
    }
    // Only words change who is speaking: a mark belongs to the word before it.
    speaker = speakerOf(alternative.speaker, speaker);

    const tokens = content.split(/\s+/).filter(Boolean);
    const slots = tokens.length === 1 ? [{ text: tokens[0]!, start, end }] : spread(tokens, start, end);
    slots.forEach((slot, i) => {
      const eos = i === slots.length - 1 && result.is_eos ? true : undefined;
      if (PUNCTUATION_ONLY.test(slot.text)) {
        pushMark(slot.text, slot.start, confidence, eos);
        return;
      }
      const marks = TRAILING_MARKS.exec(slot.text);
      words.push({
        text: prefix + (marks ? marks[1]! : slot.text),
        start: slot.start,
        end: slot.end,
        confidence,
        speaker,
      });
      prefix = "";
      if (marks) pushMark(marks[2]!, slot.end, confidence, eos);
    });
  }
  return words;
}

/** The end of the last word: the transcript's length when nothing better is known. */
export function lastEnd(words: EngineWord[]) {
  return words.reduce((max, w) => Math.max(max, w.end), 0);
}
