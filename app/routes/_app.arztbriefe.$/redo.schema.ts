import { z } from "zod";
import { requiredTextField } from "~/components/forms/fields";

// The redo dialog's form (issue 23, _app.arztbriefe.redo.$.tsx): the template chosen for the new version.

export const CHOOSE_TEMPLATE = "letters:redo.chooseTemplate";

export const redoSchema = z.object({ templateId: requiredTextField(CHOOSE_TEMPLATE) });
