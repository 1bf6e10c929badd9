import { LlmError, type ChatMessage, type JsonSchema } from "~/services/llm/types";
import type { TranscriptDocument } from "~/services/speech/transcript-format";
import { splitToFit, type CountTokens } from "./fit-text";
import { lineLabel, MESSAGE_OVERHEAD_TOKENS, transcriptLines } from "./letter-prompt";

// Long consultations: planning requests that fit the model's context window.
//
// Strategy (copied into the ADR on letter generation):
// 1. One request when it fits: system + template + every context block + style examples (≤ 2, ≤ 10% of the
//    window; dropped first if that is what breaks the fit) + the whole transcript, plus the letter's answer
//    budget, within `model.contextTokens` (counted with `model.countTokens`, exact for the local engine and
//    on the high side for remote ones).
// 2. Otherwise map-reduce. Context blocks are kept verbatim for the final request while they fit a share of
//    it (35% of what is left after the fixed parts and the answer; style examples get up to 15%, the notes
//    at least the other half); larger ones are read in parts like the
//    transcript instead of being cut, so no document is silently truncated. The transcript is split at turn
//    boundaries where possible, else at sentence ends (words, then characters, only for text without any
//    punctuation), into parts that fit beside the fixed parts and the notes answer budget.
// 3. Map: per part, one request for notes per section ({ document_type, notes: { s1: string[], … } }, at most
//    a few notes per section, ≤ 240 characters each — bounded so the answer fits its budget).
// 4. Guard: a consultation is clinical if ANY transcript part says patient_conversation or doctor_dictation;
//    it is "other" only when ALL transcript parts say other (a long consultation often opens or ends with
//    small talk, and one clinical part is reason enough to write a letter). Context parts do not vote.
//    "Other" stops before any further request.
// 5. Reduce: notes are merged per section in order (exact duplicates dropped). If they do not fit the final
//    request, groups of notes that fit one request are condensed by the model (each group keeps at most as
//    many notes per section as a notes answer holds), for at most 3 rounds and only while the notes shrink;
//    whatever still does not fit is cut round-robin across sections (every section keeps its first notes) —
//    a last resort that needs a tiny context window and a very long consultation.
// 6. Final: the letter is written from a NOTES block plus the verbatim context and style examples.
// Every request is checked before it is sent: prompt tokens + maxTokens ≤ contextTokens, else an Error.
// Answer budgets grow with the number of sections and are capped by a share of the context window.
// Requests run one after another (the local engine serves one at a time) and stop at the abort signal.

export type { CountTokens } from "./fit-text";

/** Chat framing and the schema, which OpenAI-compatible servers also put into the prompt. */
export const REQUEST_OVERHEAD_TOKENS = 16;

export function promptTokens(countTokens: CountTokens, messages: ChatMessage[], schema: JsonSchema): number {
  let total = REQUEST_OVERHEAD_TOKENS + countTokens(JSON.stringify(schema));
  for (const message of messages) total += countTokens(message.content) + MESSAGE_OVERHEAD_TOKENS;
  return total;
}

/** Thrown only by a planning mistake: every request must fit prompt + answer into the context window. */
export function assertFits(
  model: { contextTokens: number; countTokens: CountTokens },
  request: { messages: ChatMessage[]; schema: JsonSchema; maxTokens: number },
): void {
  const prompt = promptTokens((t) => model.countTokens(t), request.messages, request.schema);
  if (prompt + request.maxTokens > model.contextTokens)
    throw new Error(
      `Letter request does not fit the context window: ${prompt} prompt + ${request.maxTokens} answer > ${model.contextTokens} tokens`,
    );
}

// ---- Budgets ----

/**
 * The letter's answer: ~400 tokens per section, at most 40% of the window. A cited answer (statements with their
 * sources) spends ~40 % more on the JSON around each sentence and the ids.
 */
export function letterAnswerTokens(sectionCount: number, contextTokens: number, cited = false): number {
  return Math.min(200 + sectionCount * (cited ? 560 : 400), Math.floor(contextTokens * 0.4));
}

/** A notes answer (map or reduce): at most 25% of the window. */
export function notesAnswerTokens(sectionCount: number, contextTokens: number): number {
  return Math.min(100 + sectionCount * 400, Math.floor(contextTokens * 0.25));
}

/** A note of NOTE_MAX_CHARS is ~80 tokens of German under common tokenizers, plus JSON quoting. */
const NOTE_TOKENS = 84;
export const MAX_NOTES_PER_SECTION = 12;

/** How many notes per section an answer budget can hold (at least one). */
export function notesPerSection(sectionCount: number, answerTokens: number): number {
  const fit = Math.floor((answerTokens - 60) / (sectionCount * NOTE_TOKENS));
  return Math.max(1, Math.min(MAX_NOTES_PER_SECTION, fit));
}

export function styleBudgetTokens(contextTokens: number): number {
  return Math.min(2000, Math.floor(contextTokens * 0.1));
}

/** Below this many tokens for a transcript part or for the notes, the window is too small to be useful. */
export const MIN_PART_TOKENS = 200;

export function tooSmall(what: string): LlmError {
  return new LlmError("permanent", `The language model's context window is too small for ${what}`, {
    userMessageKey: "letters:errors.contextTooSmall",
  });
}

// ---- The transcript in parts ----

/** A sentence (or a piece of one) of one turn. */
export type TranscriptUnit = { turn: number; speakerNumber: number; label?: string; text: string; tokens: number };

export function transcriptUnits(
  transcript: TranscriptDocument,
  maxUnitTokens: number,
  countTokens: CountTokens,
): TranscriptUnit[] {
  const units: TranscriptUnit[] = [];
  transcriptLines(transcript).forEach((line, turn) => {
    for (const sentence of line.text.split(/(?<=[.!?…])\s+/)) {
      if (!sentence.trim()) continue;
      for (const text of splitToFit(sentence, maxUnitTokens, countTokens, 3))
        units.push({
          turn,
          speakerNumber: line.speakerNumber,
          ...(line.label ? { label: line.label } : {}),
          text,
          tokens: countTokens(text) + 1,
        });
    }
  });
  return units;
}

export function renderUnits(units: TranscriptUnit[], transcriptLanguage: string): string {
  const lines: string[] = [];
  let turn = -1;
  for (const unit of units) {
    if (unit.turn === turn) lines[lines.length - 1] += ` ${unit.text}`;
    else lines.push(`${lineLabel(unit, transcriptLanguage)}: ${unit.text}`);
    turn = unit.turn;
  }
  return lines.join("\n");
}

/**
 * Packs units into parts of at most `capacity` tokens (speaker labels included). When a part is full, it is
 * cut at the last turn boundary if that keeps at least 70% of it; otherwise between sentences.
 */
export function packTranscript(units: TranscriptUnit[], capacity: number, labelTokens: number): TranscriptUnit[][] {
  const parts: TranscriptUnit[][] = [];
  let current: TranscriptUnit[] = [];
  let used = 0;
  const cost = (unit: TranscriptUnit, previous: TranscriptUnit | undefined) =>
    unit.tokens + (previous?.turn === unit.turn ? 0 : labelTokens);
  for (const unit of units) {
    while (current.length > 0 && used + cost(unit, current[current.length - 1]) > capacity) {
      let cut = current.length;
      for (let i = current.length - 1; i > 0; i--)
        if (current[i]!.turn !== current[i - 1]!.turn) {
          cut = i;
          break;
        }
      const kept = current.slice(0, cut);
      const keptTokens = kept.reduce((sum, u, i) => sum + cost(u, kept[i - 1]), 0);
      if (cut === current.length || keptTokens < capacity * 0.7) {
        parts.push(current);
        current = [];
      } else {
        parts.push(kept);
        current = current.slice(cut);
      }
      used = current.reduce((sum, u, i) => sum + cost(u, current[i - 1]), 0);
    }
    used += cost(unit, current[current.length - 1]);
    current.push(unit);
  }
  if (current.length > 0) parts.push(current);
  return parts;
}
