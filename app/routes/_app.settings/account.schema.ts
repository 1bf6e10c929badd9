import { z } from "zod";
import { confirmField } from "~/components/forms/fields";

// Settings › "Delete account" (_app.settings.account.tsx, issue 23): the explicit confirmation.

export const CONFIRM_REQUIRED = "account:delete.confirmRequired";

export const deleteAccountSchema = z.object({ confirm: confirmField(CONFIRM_REQUIRED) });
