import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { renameFile } from "~/services/recordings/metadata.server";

// SPEC §7 POST /api/rename-file { s3_key, display_name }
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "s3_key", "recordings:errors.fileKeyRequired");
  const result = await renameFile({ userId: user.id, key, displayName: body.display_name });
  await auditRecording(request, user.id, "recording.rename", key);
  return apiJson(result);
});
