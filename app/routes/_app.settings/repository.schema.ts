import { z } from "zod";
import { textField } from "~/components/forms/fields";

// Settings › "Template Repository" (_app.settings.repository.tsx, issue 23): the template a card's button adds.

export const addTemplateSchema = z.object({ templateId: textField() });
