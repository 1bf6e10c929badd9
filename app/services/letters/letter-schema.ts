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

export function buildLetterSchema(sections: string[], language: LetterLanguage): JsonSchema {
  const none = noInformationText(language);
  return {
    type: "object",
    properties: {
      document_type: { type: "string", enum: [...DOCUMENT_TYPES] },
      sections: {
        ...sectionsProperty(sections),
        description: `One text per template section, in order. "${none}" when the data says nothing about it.`,
      },
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

/**
 * Reads `{ s1: string, … }` into sections with the given titles, in order. Missing, extra or non-string
 * keys are a structure error. Empty text, or either language's no-information wording, becomes exactly the
 * letter language's wording.
 */
export function readSectionTexts(value: unknown, titles: string[], language: LetterLanguage): LetterSection[] {
  if (!isRecord(value)) throw structureError("sections is not an object");
  const expected = titles.map((_, i) => sectionKey(i));
  const extra = Object.keys(value).filter((k) => !expected.includes(k));
  if (extra.length > 0) throw structureError(`unexpected section keys ${extra.slice(0, 5).join(", ")}`);
  return titles.map((title, i) => {
    const text = value[expected[i]!];
    if (typeof text !== "string") throw structureError(`section ${expected[i]} is missing or not text`);
    const trimmed = text.trim();
    return { title, text: !trimmed || isNoInformation(trimmed) ? noInformationText(language) : trimmed };
  });
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

export type LetterAnswer = { documentType: DocumentType; sections: LetterSection[] };

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
  return { documentType, sections: readSectionTexts(value.sections, titles, language) };
}
