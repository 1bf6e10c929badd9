import type { JsonSchema } from "~/services/llm/types";
import { isNoInformation, noInformationText, type LetterLanguage, type LetterSection } from "./letter-content";
import { LetterGenerationError } from "./letter-errors";

// The answer schema of a letter request. Sections are keyed s1…sN rather than by title: titles are free text
// (umlauts, spaces, duplicates after normalising) and JSON Schema property names in a strict OpenAI schema
// should be plain identifiers. The keys fix the order and presence of every template element — all are
// required and nothing else is allowed — so a structurally wrong answer is refused by the engine's decoder or
// validator, and `readLetterAnswer` checks again because a validated answer is still untrusted input here.

export const DOCUMENT_TYPES = ["patient_conversation", "doctor_dictation", "other"] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export const LETTER_SCHEMA_NAME = "arztbrief";

export function sectionKey(index: number): string {
  return `s${index + 1}`;
}

/** `{ s1: string, … }` in template order, every key required, no others; the title is each key's description. */
export function sectionsProperty(titles: string[], describe: (title: string) => string = (t) => t): JsonSchema {
  if (titles.length === 0) throw new Error("A letter needs at least one section");
  const properties: Record<string, JsonSchema> = {};
  titles.forEach((title, i) => {
    properties[sectionKey(i)] = { type: "string", description: describe(title) };
  });
  return { type: "object", properties, required: Object.keys(properties), additionalProperties: false };
}

/**
 * A statement of a cited section (issue 24): its text and the ids of the transcript lines it rests on, as the model
 * names them. The model's word only — the checker verifies every one (services/evidence/citations.ts).
 */
export type CitedItem = { section: number; text: string; sources: string[] };

/** At most this many sources per statement are kept: a statement resting on more is a summary, and the rest noise. */
export const MAX_CITED_SOURCES = 8;

const STATEMENTS: JsonSchema = {
  type: "array",
  items: {
    type: "object",
    properties: {
      text: { type: "string" },
      sources: { type: "array", items: { type: "string" } },
    },
    required: ["text", "sources"],
    additionalProperties: false,
  },
};

/**
 * The letter's answer schema. `cited`: each section is a list of statements with their sources (for engines that
 * can give them, and only when the prompt carries the transcript's line ids); otherwise one text per section.
 */
export function buildLetterSchema(sections: string[], language: LetterLanguage, cited = false): JsonSchema {
  const none = noInformationText(language);
  const property = cited
    ? {
        type: "object" as const,
        properties: Object.fromEntries(
          sections.map((title, i) => [sectionKey(i), { ...STATEMENTS, description: title }]),
        ),
        required: sections.map((_, i) => sectionKey(i)),
        additionalProperties: false,
        description:
          `One list of statements per template section, in order: each statement's text and the [ids] of the ` +
          `transcript lines that state it. "${none}" with no sources when the data says nothing about it.`,
      }
    : {
        ...sectionsProperty(sections),
        description: `One text per template section, in order. "${none}" when the data says nothing about it.`,
      };
  return {
    type: "object",
    properties: {
      document_type: { type: "string", enum: [...DOCUMENT_TYPES] },
      sections: property,
    },
    required: ["document_type", "sections"],
    additionalProperties: false,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function structureError(detail: string): LetterGenerationError {
  return new LetterGenerationError("structure_error", { detail });
}

/** A cited section's statements in order, joined into its text: a space between two, none where one ends a line. */
function joinStatements(items: Array<{ text: string }>): string {
  return items.reduce((text, item) => {
    if (text === "" || /\s$/.test(text) || /^\s/.test(item.text)) return text + item.text;
    return `${text} ${item.text}`;
  }, "");
}

function readStatements(value: unknown, key: string): Array<{ text: string; sources: string[] }> {
  if (!Array.isArray(value)) throw structureError(`section ${key} is missing or not a list of statements`);
  return value.map((item) => {
    if (!isRecord(item) || typeof item.text !== "string" || !Array.isArray(item.sources))
      throw structureError(`a statement of section ${key} is not { text, sources }`);
    const sources = item.sources.filter((id): id is string => typeof id === "string");
    // "[t3p0]" as the prompt shows it, or "t3p0": the id either way.
    return {
      text: item.text,
      sources: sources.map((id) => id.replace(/^\[|\]$/g, "").trim()).slice(0, MAX_CITED_SOURCES),
    };
  });
}

/**
 * Reads `{ s1: string, … }` — or, for a cited answer, `{ s1: [{ text, sources }], … }` — into sections with the
 * given titles, in order, and the statements with their sources. Missing, extra or mistyped keys are a structure
 * error. Empty text, or either language's no-information wording, becomes exactly the letter language's wording
 * (and cites nothing).
 */
export function readSectionTexts(
  value: unknown,
  titles: string[],
  language: LetterLanguage,
): { sections: LetterSection[]; citations: CitedItem[] } {
  if (!isRecord(value)) throw structureError("sections is not an object");
  const expected = titles.map((_, i) => sectionKey(i));
  const extra = Object.keys(value).filter((k) => !expected.includes(k));
  if (extra.length > 0) throw structureError(`unexpected section keys ${extra.slice(0, 5).join(", ")}`);
  const citations: CitedItem[] = [];
  const sections = titles.map((title, i) => {
    const key = expected[i]!;
    const raw = value[key];
    let text: string;
    if (typeof raw === "string") text = raw;
    else {
      const statements = readStatements(raw, key);
      text = joinStatements(statements);
      for (const s of statements)
        if (s.text.trim() && s.sources.length > 0)
          citations.push({ section: i, text: s.text.trim(), sources: s.sources });
    }
    const trimmed = text.trim();
    return { title, text: !trimmed || isNoInformation(trimmed) ? noInformationText(language) : trimmed };
  });
  return { sections, citations: citations.filter((c) => !isNoInformation(sections[c.section]!.text)) };
}

export function readDocumentType(value: unknown): DocumentType {
  if (typeof value !== "string" || !(DOCUMENT_TYPES as readonly string[]).includes(value))
    throw structureError("document_type is not one of the allowed values");
  return value as DocumentType;
}

/**
 * The guard (SPEC §4, §8): a transcript that is neither a patient conversation nor a dictation yields no
 * letter. On a redo with another template the same finding reads as SPEC's "template switch failed".
 */
export function assertClinical(documentType: DocumentType, mode: "create" | "redo" = "create"): void {
  if (documentType !== "other") return;
  throw new LetterGenerationError(mode === "redo" ? "template_switch_failed" : "not_patient_conversation");
}

export type LetterAnswer = { documentType: DocumentType; sections: LetterSection[]; citations: CitedItem[] };

/**
 * Validates a letter answer against `buildLetterSchema(titles)` and applies the guard. `checkDocumentType:
 * false` is for the final request of a long consultation, whose classification comes from its parts.
 */
export function readLetterAnswer(
  value: unknown,
  titles: string[],
  language: LetterLanguage,
  options: { checkDocumentType?: boolean; mode?: "create" | "redo" } = {},
): LetterAnswer {
  if (!isRecord(value)) throw structureError("answer is not an object");
  const extra = Object.keys(value).filter((k) => k !== "document_type" && k !== "sections");
  if (extra.length > 0) throw structureError(`unexpected keys ${extra.slice(0, 5).join(", ")}`);
  const documentType = readDocumentType(value.document_type);
  // The classification decides before the sections: for a recording that is no consultation, "not a patient
  // conversation" is the useful message, whatever the model put into the sections.
  if (options.checkDocumentType !== false) assertClinical(documentType, options.mode);
  return { documentType, ...readSectionTexts(value.sections, titles, language) };
}
