import { optionalFlag } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { updateFileTags } from "~/services/recordings/metadata.server";

// SPEC §7 POST /api/update-file-tags { s3_key, tags, update_all_related }
export const action = apiPost(async ({ request, user, body }) => {
  const result = await updateFileTags({
    userId: user.id,
    key: body.s3_key,
    tags: body.tags,
    updateAllRelated: optionalFlag(body, "update_all_related"),
  });
  await auditRecording(request, user.id, "recording.tags", String(body.s3_key));
  return apiJson(result);
});
