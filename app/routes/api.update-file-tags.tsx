import { optionalFlag, requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { updateFileTags } from "~/services/recordings/metadata.server";

// SPEC §7 POST /api/update-file-tags { s3_key, tags, update_all_related }
export const action = apiPost(async ({ request, user, body }) => {
  // The flag is checked before the key, as it always was.
  const updateAllRelated = optionalFlag(body, "update_all_related");
  const key = requiredKey(body, "s3_key", "recordings:errors.fileKeyRequired");
  const result = await updateFileTags({ userId: user.id, key, tags: body.tags, updateAllRelated });
  await auditRecording(request, user.id, "recording.tags", key);
  return apiJson(result);
});
