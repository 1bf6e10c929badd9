import type { ChatMessage, JsonSchema } from "~/services/llm/types";
import { speakerLabel, type TranscriptDocument } from "~/services/speech/transcript-format";
import type { LetterLanguage } from "./letter-content";
import { LetterGenerationError } from "./letter-errors";
import { MESSAGE_OVERHEAD_TOKENS, NOTE_MAX_CHARS, dataBlock, transcriptLines, type ContextItem } from "./letter-prompt";
import { DOCUMENT_TYPES, readDocumentType, sectionKey, type DocumentType } from "./letter-schema";

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

export type CountTokens = (text: string) => number;

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

/** The letter's answer: ~400 tokens per section, at most 40% of the window. */
export function letterAnswerTokens(sectionCount: number, contextTokens: number): number {
  return Math.min(200 + sectionCount * 400, Math.floor(contextTokens * 0.4));
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

// ---- Notes ----

/** Per section (template order) the notes found so far. */
export type SectionNotes = string[][];

export const NOTES_SCHEMA_NAME = "arztbrief_notes";
export const REDUCE_SCHEMA_NAME = "arztbrief_notes_reduce";

/**
 * `maxItems` bounds the lists; the length of a note is asked for in the description and enforced when the
 * answer is read (strict OpenAI schemas do not accept maxLength), while maxTokens bounds the whole answer.
 */
export function buildNotesSchema(sectionCount: number, maxItems: number, withDocumentType: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (let i = 0; i < sectionCount; i++)
    properties[sectionKey(i)] = {
      type: "array",
      items: { type: "string", description: `One fact, at most ${NOTE_MAX_CHARS} characters` },
      maxItems,
    };
  const notes: JsonSchema = {
    type: "object",
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
  return withDocumentType
    ? {
        type: "object",
        properties: { document_type: { type: "string", enum: [...DOCUMENT_TYPES] }, notes },
        required: ["document_type", "notes"],
        additionalProperties: false,
      }
    : { type: "object", properties: { notes }, required: ["notes"], additionalProperties: false };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function structureError(detail: string) {
  return new LetterGenerationError("structure_error", { detail });
}

function cleanNote(note: string): string {
  const text = note.replace(/\s+/g, " ").trim();
  return text.length > NOTE_MAX_CHARS ? `${text.slice(0, NOTE_MAX_CHARS - 1)}…` : text;
}

/** Validates a notes answer; over-long lists and notes are cut to their bounds rather than refused. */
export function readNotesAnswer(
  value: unknown,
  sectionCount: number,
  maxItems: number,
  withDocumentType: boolean,
): { documentType: DocumentType | null; notes: SectionNotes } {
  if (!isRecord(value)) throw structureError("notes answer is not an object");
  const allowed = withDocumentType ? ["document_type", "notes"] : ["notes"];
  if (Object.keys(value).some((k) => !allowed.includes(k))) throw structureError("unexpected keys in notes answer");
  const documentType = withDocumentType ? readDocumentType(value.document_type) : null;
  const raw = value.notes;
  if (!isRecord(raw)) throw structureError("notes is not an object");
  const keys = Array.from({ length: sectionCount }, (_, i) => sectionKey(i));
  if (Object.keys(raw).some((k) => !keys.includes(k))) throw structureError("unexpected section keys in notes");
  const notes = keys.map((key) => {
    const list = raw[key];
    if (!Array.isArray(list) || list.some((n) => typeof n !== "string"))
      throw structureError(`notes for ${key} missing or not a list of text`);
    return (list as string[]).map(cleanNote).filter(Boolean).slice(0, maxItems);
  });
  return { documentType, notes };
}

const noteKey = (note: string) => note.toLowerCase().replace(/\s+/g, " ").trim();

/** Concatenates notes per section in the order given, dropping exact (case/space-insensitive) repeats. */
export function mergeNotes(parts: SectionNotes[], sectionCount: number): SectionNotes {
  return Array.from({ length: sectionCount }, (_, i) => {
    const seen = new Set<string>();
    const merged: string[] = [];
    for (const part of parts)
      for (const note of part[i] ?? []) {
        const key = noteKey(note);
        if (seen.has(key)) continue;
        seen.add(key);
        merged.push(note);
      }
    return merged;
  });
}

export const EMPTY_NOTES_LINE = "- (none)";

/** "s1 (Anamnese):" followed by "- note" lines, per section. */
export function renderNotes(notes: SectionNotes, titles: string[]): string {
  return titles
    .map((title, i) => {
      const list = notes[i] ?? [];
      const lines = list.length ? list.map((n) => `- ${n}`) : [EMPTY_NOTES_LINE];
      return [`${sectionKey(i)} (${title}):`, ...lines].join("\n");
    })
    .join("\n");
}

export function notesBlock(notes: SectionNotes, titles: string[], part?: { index: number; total: number }): string {
  return dataBlock("NOTES", renderNotes(notes, titles), part ? { part: `${part.index}/${part.total}` } : {});
}

export function countNotes(notes: SectionNotes): number {
  return notes.reduce((sum, list) => sum + list.length, 0);
}

/**
 * Groups of notes (section structure kept) whose rendered block fits `capacity` tokens. A note too long for
 * a group on its own (impossible with NOTE_MAX_CHARS and sane budgets) still gets a group of its own.
 */
export function groupNotes(
  notes: SectionNotes,
  titles: string[],
  capacity: number,
  countTokens: CountTokens,
): SectionNotes[] {
  const groups: SectionNotes[] = [];
  const empty = () => titles.map(() => [] as string[]);
  let current = empty();
  let used = countTokens(notesBlock(current, titles));
  let size = 0;
  notes.forEach((list, section) => {
    for (const note of list) {
      const cost = countTokens(`- ${note}\n`);
      if (size > 0 && used + cost > capacity) {
        groups.push(current);
        current = empty();
        used = countTokens(notesBlock(current, titles));
        size = 0;
      }
      current[section]!.push(note);
      used += cost;
      size++;
    }
  });
  if (size > 0) groups.push(current);
  return groups;
}

/** Last resort: keep notes round-robin across sections (each section's first notes first) while they fit. */
export function trimNotesToFit(
  notes: SectionNotes,
  titles: string[],
  budget: number,
  countTokens: CountTokens,
): SectionNotes {
  const kept: SectionNotes = titles.map(() => []);
  let used = countTokens(notesBlock(kept, titles));
  const longest = Math.max(0, ...notes.map((l) => l.length));
  for (let rank = 0; rank < longest; rank++)
    notes.forEach((list, section) => {
      const note = list[rank];
      if (note === undefined) return;
      const cost = countTokens(`- ${note}\n`);
      if (used + cost > budget) return;
      kept[section]!.push(note);
      used += cost;
    });
  // The per-note costs are estimates; drop from the longest list until the block really fits.
  while (countTokens(notesBlock(kept, titles)) > budget && countNotes(kept) > 0) {
    const longestList = kept.reduce((a, b) => (b.length > a.length ? b : a));
    longestList.pop();
  }
  return kept;
}

// ---- Splitting text into parts that fit ----

/** The longest prefixes of `text` that fit `maxTokens`, by binary search (text without any spaces). */
function splitCharacters(text: string, maxTokens: number, countTokens: CountTokens): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest) {
    let low = 1;
    let high = rest.length;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (countTokens(rest.slice(0, mid)) <= maxTokens) low = mid;
      else high = mid - 1;
    }
    // Never cut a surrogate pair in half.
    let end = low;
    if (end < rest.length && /[\uD800-\uDBFF]/.test(rest[end - 1]!) && end > 1) end--;
    pieces.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  return pieces;
}

function packPieces(pieces: string[], joiner: string, maxTokens: number, countTokens: CountTokens): string[] {
  const packed: string[] = [];
  let current: string[] = [];
  let used = 0;
  const joinCost = countTokens(joiner) || 1;
  const close = () => {
    if (current.length === 0) return;
    // Token counts are not exactly additive; verify the joined text and hand back what overflows.
    while (current.length > 1 && countTokens(current.join(joiner)) > maxTokens) {
      const last = current.pop()!;
      packed.push(current.join(joiner));
      current = [last];
    }
    packed.push(current.join(joiner));
    current = [];
    used = 0;
  };
  for (const piece of pieces) {
    const cost = countTokens(piece);
    if (current.length > 0 && used + joinCost + cost > maxTokens) close();
    used += (current.length > 0 ? joinCost : 0) + cost;
    current.push(piece);
  }
  close();
  return packed;
}

const SEPARATORS: Array<{ pattern: RegExp; joiner: string }> = [
  { pattern: /\n\s*\n/, joiner: "\n\n" },
  { pattern: /\n/, joiner: "\n" },
  { pattern: /(?<=[.!?…])\s+/, joiner: " " },
  { pattern: /\s+/, joiner: " " },
];

/** Pieces of at most `maxTokens`: cut at paragraphs, then lines, sentence ends, spaces, and characters. */
export function splitToFit(text: string, maxTokens: number, countTokens: CountTokens, level = 0): string[] {
  if (maxTokens < 1) throw new Error("splitToFit needs a positive budget");
  if (countTokens(text) <= maxTokens) return [text];
  for (let i = level; i < SEPARATORS.length; i++) {
    const { pattern, joiner } = SEPARATORS[i]!;
    const parts = text.split(pattern).filter((p) => p.trim() !== "");
    if (parts.length < 2) continue;
    const pieces = parts.flatMap((p) => splitToFit(p, maxTokens, countTokens, i + 1));
    return packPieces(pieces, joiner, maxTokens, countTokens);
  }
  return splitCharacters(text, maxTokens, countTokens);
}

/**
 * The start and the end of `text` within `budget` tokens (60% start, 40% end, cut at spaces), with `marker`
 * on a line of its own where the middle was left out. Empty when the budget cannot hold anything useful.
 */
export function headAndTail(text: string, budget: number, countTokens: CountTokens, marker: string): string {
  if (countTokens(text) <= budget) return text;
  const room = budget - countTokens(`\n${marker}\n`);
  if (room < 16) return "";
  // Largest n in [0, max] with fits(n), for a predicate that holds for small n.
  const largest = (max: number, fits: (n: number) => boolean) => {
    let low = 0;
    let high = max;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (fits(mid)) low = mid;
      else high = mid - 1;
    }
    return low;
  };
  let headEnd = largest(text.length, (n) => countTokens(text.slice(0, n)) <= Math.floor(room * 0.6));
  const space = text.lastIndexOf(" ", headEnd);
  if (space > headEnd * 0.8) headEnd = space;
  const head = text.slice(0, headEnd).trimEnd();
  const tailRoom = room - countTokens(head);
  const rest = text.slice(headEnd);
  let tailStart = rest.length - largest(rest.length, (n) => countTokens(rest.slice(rest.length - n)) <= tailRoom);
  const nextSpace = rest.indexOf(" ", tailStart);
  if (nextSpace >= 0 && nextSpace - tailStart < (rest.length - tailStart) * 0.2) tailStart = nextSpace;
  return `${head}\n${marker}\n${rest.slice(tailStart).trimStart()}`;
}

// ---- Transcript and context in parts ----

/** A sentence (or a piece of one) of one turn. */
export type TranscriptUnit = { turn: number; speakerNumber: number; text: string; tokens: number };

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
        units.push({ turn, speakerNumber: line.speakerNumber, text, tokens: countTokens(text) + 1 });
    }
  });
  return units;
}

export function renderUnits(units: TranscriptUnit[], transcriptLanguage: string): string {
  const lines: string[] = [];
  let turn = -1;
  for (const unit of units) {
    if (unit.turn === turn) lines[lines.length - 1] += ` ${unit.text}`;
    else lines.push(`${speakerLabel(transcriptLanguage, unit.speakerNumber)}: ${unit.text}`);
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

/** Where a note came from, when it is not the transcript: "(PDF Befund.pdf) …". */
export function contextSourceLabel(item: ContextItem, language: LetterLanguage): string {
  const name = item.sourceName?.replace(/\s+/g, " ").trim().slice(0, 60);
  if (item.kind === "pdf") return name ? `PDF ${name}` : "PDF";
  if (item.kind === "patient_record")
    return `${language === "en-GB" ? "patient record" : "Patientenakte"}${name ? ` ${name}` : ""}`;
  return language === "en-GB" ? "additional context" : "Zusatzkontext";
}
