import type { JsonSchema } from "~/services/llm/types";
import type { LetterLanguage } from "./letter-content";
import { LetterGenerationError } from "./letter-errors";
import { dataBlock } from "./data-blocks";
import { NOTE_MAX_CHARS, type ContextItem } from "./letter-prompt";
import { DOCUMENT_TYPES, readDocumentType, sectionKey, type DocumentType } from "./letter-schema";
import type { CountTokens } from "./long-transcript";

// The notes of a long consultation (steps 3–5 of the strategy in long-transcript.ts): their schema, reading a
// notes answer, merging them per section, rendering them as a NOTES block, grouping them for condensing and,
// as a last resort, cutting them to fit.

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

/** Where a note came from, when it is not the transcript: "(PDF Befund.pdf) …". */
export function contextSourceLabel(item: ContextItem, language: LetterLanguage): string {
  const name = item.sourceName?.replace(/\s+/g, " ").trim().slice(0, 60);
  if (item.kind === "pdf") return name ? `PDF ${name}` : "PDF";
  if (item.kind === "patient_record")
    return `${language === "en-GB" ? "patient record" : "Patientenakte"}${name ? ` ${name}` : ""}`;
  return language === "en-GB" ? "additional context" : "Zusatzkontext";
}
