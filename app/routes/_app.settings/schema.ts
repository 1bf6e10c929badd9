import { z } from "zod";
import { intentForms, nullableTextField, textField } from "~/components/forms/fields";

// The Settings page's forms (issue 23), told apart by their intents: a template card's structure editor and its
// reset, and the AI Learning switch. Each carries the template language it was shown in. The structure itself is
// parsed by structureInputSchema (template-rules.ts), the schema the editor's conform list buttons work on.

export const INTENT = { structure: "structure", reset: "reset", rag: "rag" } as const;

const shownIn = { language: nullableTextField() };

export const settingsActionSchema = intentForms([
  z.object({ intent: z.literal(INTENT.structure), templateId: textField(), ...shownIn }),
  z.object({ intent: z.literal(INTENT.reset), templateId: textField(), ...shownIn }),
  // The switch posts the state it turns to: "true" agrees, anything else withdraws.
  z.object({ intent: z.literal(INTENT.rag), ragAgreed: textField().transform((v) => v === "true"), ...shownIn }),
]);
