import { shortConsultation } from "./long-consultation";
import type { ExtractionRule, RecordedRequest, ScriptedModel } from "./scripted-model";
import { findDataBlocks } from "~/services/letters/data-blocks";
import type { LetterInputs } from "~/services/letters/letter-prompt";

// What the letter-generation tests share: a five-section template, rules that find its facts, and checks.

export const template = {
  name: "Kardiologie",
  prompt: "Sachlich und kurz.",
  elements: [
    { name: "Anamnese", description: "Beschwerden und Vorgeschichte" },
    { name: "Diagnose", description: "Diagnosen" },
    { name: "Medikation", description: "Medikamente mit Dosis" },
    { name: "Allergien", description: "Allergien und Unverträglichkeiten" },
    { name: "Procedere", description: "Weiteres Vorgehen" },
  ],
};
export const MEDIKATION = 2;
export const ALLERGIEN = 3;

export const rules: ExtractionRule[] = [
  { pattern: /\b\d+(?:[.,]\d+)?\s?mg\b/, section: MEDIKATION },
  { pattern: /allergi/i, section: ALLERGIEN },
  { pattern: /Vorhofflimmern|Diagnose/, section: 1 },
];

export function inputs(overrides: Partial<LetterInputs> = {}): LetterInputs {
  return { language: "de-DE", template, transcript: shortConsultation(), context: [], ...overrides };
}

export const within = (model: ScriptedModel) => (r: RecordedRequest) =>
  r.promptTokens + r.maxTokens <= model.contextTokens;
export const blocksOf = (request: RecordedRequest) => request.messages.flatMap((m) => findDataBlocks(m.content));

export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}
