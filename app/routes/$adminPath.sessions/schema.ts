import { z } from "zod";
import { checkboxField, intentForms, textField } from "~/components/forms/fields";

// The admin's two session forms (issue 23): end every session of the account named by its e-mail address, or,
// confirmed, every session of everyone. Of the posted fields only these are read.

export const INTENT = { endAccount: "end-account", endAll: "end-all" } as const;

export type AdminSessionsIntent = (typeof INTENT)[keyof typeof INTENT];

export const MAX_EMAIL = 320;

export const adminSessionsSchema = intentForms([
  z.object({
    intent: z.literal(INTENT.endAccount),
    email: textField().transform((email) => email.trim().slice(0, MAX_EMAIL)),
  }),
  z.object({ intent: z.literal(INTENT.endAll), confirm: checkboxField() }),
]);
