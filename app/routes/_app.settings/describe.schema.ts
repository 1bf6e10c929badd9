import { z } from "zod";
import { textField } from "~/components/forms/fields";

// The element-description dialog (_app.settings.describe.$templateId.$elementId.tsx, issue 23): the text as typed.
// Its rules are the structure's own (elementInputSchema in template-rules.ts), checked by the action so that the
// typed text comes back with the message.

export const describeSchema = z.object({ description: textField() });
