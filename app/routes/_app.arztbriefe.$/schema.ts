import { z } from "zod";
import { firstOf, intentForms, nullableTextField, textField, textListField } from "~/components/forms/fields";
import { FLAG_KINDS } from "~/services/evidence/flag-kinds";

// The letter editor's forms (issue 23): one schema, read by the action, whose intents name the buttons of the
// editor, the refinement panel, the proposal and the version history. What the fields must hold (an instruction,
// a prompt's title, a version that exists) is checked by the letter services the JSON API shares, so their
// messages come back in the panel they belong to.

/** The editor's named intents (STYLE.md §7). */
export const INTENT = {
  save: "save",
  release: "release",
  refine: "refine",
  usePrompt: "usePrompt",
  savePrompt: "savePrompt",
  deletePrompt: "deletePrompt",
  accept: "accept",
  reject: "reject",
  restore: "restore",
  confirmFlag: "confirmFlag",
  proposeOmission: "proposeOmission",
  regenerate: "regenerate",
} as const;

export type EditorIntent = (typeof INTENT)[keyof typeof INTENT];

/** The refinement's scope: a section's title, or the whole letter when the form names none. */
export const ALL_SECTIONS = "__all__";
const scope = textField(ALL_SECTIONS);

export const editorActionSchema = intentForms([
  z.object({
    intent: z.literal(INTENT.save),
    // One title and one text per section, in order; base_version guards against overwriting a newer version.
    title: textListField(),
    text: textListField(),
    base_version: nullableTextField(),
  }),
  z.object({ intent: z.literal(INTENT.release) }),
  z.object({ intent: z.literal(INTENT.refine), query: textField(), scope }),
  z.object({ intent: z.literal(INTENT.usePrompt), promptId: textField(), scope }),
  z.object({
    intent: z.literal(INTENT.savePrompt),
    query: textField(),
    scope,
    title: textField(),
    promptText: textField(),
  }),
  z.object({ intent: z.literal(INTENT.deletePrompt), promptId: textField() }),
  z.object({ intent: z.literal(INTENT.accept), proposalId: textField() }),
  z.object({ intent: z.literal(INTENT.reject), proposalId: textField() }),
  z.object({ intent: z.literal(INTENT.restore), version: textField() }),
  // The check (issue 24): a flag of a sentence, named by its wording's hash, confirmed as right; an omission, by its
  // place in the list, turned into a proposal.
  z.object({ intent: z.literal(INTENT.confirmFlag), sentence: textField(), flag: firstOf(z.enum(FLAG_KINDS)) }),
  z.object({ intent: z.literal(INTENT.proposeOmission), omission: firstOf(z.coerce.number().int().min(0).max(1000)) }),
  // Regeneration from the corrected transcript (ADR 0032): the whole letter, or the section the selector names.
  z.object({ intent: z.literal(INTENT.regenerate), scope }),
]);

export type EditorForm = z.infer<typeof editorActionSchema>;
