import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { deleteLetter } from "~/services/letters/editing.server";

// SPEC §7 POST /api/delete-arztbrief { key }: the letter and all its versions; the recording's letter
// status returns to "pending". Refused (409) while a letter job runs for it.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await deleteLetter({ userId: user.id, key: body.key });
  await audit({
    userId: user.id,
    action: "letter.delete",
    entityType: "letter",
    entityId: String(body.key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
