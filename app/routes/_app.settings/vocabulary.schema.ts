import { z } from "zod";
import { intentForms, textField } from "~/components/forms/fields";

// Settings › "Mein Vokabular" (_app.settings.vocabulary.tsx, issue 24): add a term by hand, or remove one named by its
// id. The term's rules are the service's (user-vocabulary.server.ts vocabularyTermFrom), so that a refused term comes
// back as typed with the service's message.

export const INTENT = { add: "add", remove: "remove" } as const;

export const vocabularyActionSchema = intentForms([
  z.object({ intent: z.literal(INTENT.add), term: textField(), language: textField() }),
  z.object({ intent: z.literal(INTENT.remove), id: textField() }),
]);
