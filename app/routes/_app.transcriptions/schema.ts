import { z } from "zod";
import { checkboxField, intentForms, textField } from "~/components/forms/fields";

// The Transcriptions screens' forms (issue 23), read by the actions and named by their buttons: "Create letter"
// in the list (for the recording whose key it carries), and in the viewer "Create document" and the delete
// confirmation (both for the transcript the viewer shows, never a key from the form), and the corrections.

export const INTENT = {
  createLetter: "createLetter",
  delete: "delete",
  correctWord: "correctWord",
  confirmWord: "confirmWord",
  nameSpeaker: "nameSpeaker",
  mergeSpeakers: "mergeSpeakers",
  moveSegment: "moveSegment",
} as const;

export const transcriptionListActionSchema = intentForms([
  z.object({ intent: z.literal(INTENT.createLetter), key: textField() }),
]);

// The corrections of issue 24 (the review's word form, the speakers' forms) carry the version they were made on; their
// fields are checked by the service's readers (corrections.server.ts), as the JSON API's are, so both doors refuse
// the same input with the same message.
const word = { base_version: textField(), segment: textField(), index: textField(), review: textField() };

export const transcriptViewerActionSchema = intentForms([
  z.object({ intent: z.literal(INTENT.createLetter) }),
  z.object({ intent: z.literal(INTENT.delete) }),
  z.object({
    intent: z.literal(INTENT.correctWord),
    ...word,
    text: textField(),
    apply_to_all: checkboxField(),
    add_to_vocabulary: checkboxField(),
  }),
  z.object({
    intent: z.literal(INTENT.confirmWord),
    ...word,
    apply_to_all: checkboxField(),
    add_to_vocabulary: checkboxField(),
  }),
  z.object({
    intent: z.literal(INTENT.nameSpeaker),
    base_version: textField(),
    speaker: textField(),
    role: textField(),
    name: textField(),
  }),
  z.object({
    intent: z.literal(INTENT.mergeSpeakers),
    base_version: textField(),
    from: textField(),
    into: textField(),
  }),
  z.object({ intent: z.literal(INTENT.moveSegment), base_version: textField(), segment: textField(), to: textField() }),
]);

export type CorrectionIntent = Exclude<(typeof INTENT)[keyof typeof INTENT], "createLetter" | "delete">;
