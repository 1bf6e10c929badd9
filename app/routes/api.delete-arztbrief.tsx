import { apiJson, apiPost } from "~/services/web/api.server";
import { auditLetter } from "~/services/audit/events.server";
import { deleteLetter } from "~/services/letters/editing.server";

// SPEC §7 POST /api/delete-arztbrief { key }: the letter and all its versions; the recording's letter
// status returns to "pending". Refused (409) while a letter job runs for it.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await deleteLetter({ userId: user.id, key: body.key });
  await auditLetter(request, user.id, "letter.delete", String(body.key));
  return apiJson(result);
});
