import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditLetter } from "~/services/audit/events.server";
import { deleteLetter } from "~/services/letters/editing.server";

// SPEC §7 POST /api/delete-arztbrief { key }: the letter and all its versions; the recording's letter
// status returns to "pending". Refused (409) while a letter job runs for it.
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "key", "letters:errors.letterKeyRequired");
  const result = await deleteLetter({ userId: user.id, key });
  await auditLetter(request, user.id, "letter.delete", key);
  return apiJson(result);
});
