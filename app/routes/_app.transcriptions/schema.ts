import { z } from "zod";
import { intentForms, textField } from "~/components/forms/fields";

// The Transcriptions screens' forms (issue 23), read by the actions and named by their buttons: "Create letter"
// in the list (for the recording whose key it carries), and in the viewer "Create document" and the delete
// confirmation (both for the transcript the viewer shows, never a key from the form).

export const INTENT = { createLetter: "createLetter", delete: "delete" } as const;

export const transcriptionListActionSchema = intentForms([
  z.object({ intent: z.literal(INTENT.createLetter), key: textField() }),
]);

export const transcriptViewerActionSchema = intentForms([
  z.object({ intent: z.literal(INTENT.createLetter) }),
  z.object({ intent: z.literal(INTENT.delete) }),
]);
