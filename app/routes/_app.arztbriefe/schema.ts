import { z } from "zod";
import { intentForms, textField } from "~/components/forms/fields";

// The Arztbriefe list's one form (issue 23): the delete confirmation, read by the action and named by its button.

export const INTENT = { delete: "delete" } as const;

export const letterListActionSchema = intentForms([z.object({ intent: z.literal(INTENT.delete), key: textField() })]);
