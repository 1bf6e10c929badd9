import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { forceCleanup } from "~/services/recordings/removal.server";

// SPEC §7 POST /api/force-cleanup { s3_key } → { cleanup_results }
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "s3_key", "recordings:errors.fileKeyRequired");
  const result = await forceCleanup({ userId: user.id, key });
  await auditRecording(request, user.id, "recording.reset", key);
  return apiJson(result);
});
