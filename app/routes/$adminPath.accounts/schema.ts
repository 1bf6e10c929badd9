import { z } from "zod";
import { checkboxField, textField } from "~/components/forms/fields";

// The admin's account deletion form (issue 23): the account's exact e-mail address and the explicit confirmation.

export const MAX_EMAIL = 320;

export const adminDeleteAccountSchema = z.object({
  email: textField().transform((email) => email.trim().slice(0, MAX_EMAIL)),
  confirm: checkboxField(),
});
