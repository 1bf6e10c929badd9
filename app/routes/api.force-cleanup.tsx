import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { forceCleanup } from "~/services/recordings/removal.server";

// SPEC §7 POST /api/force-cleanup { s3_key } → { cleanup_results }
export const action = apiPost(async ({ request, user, body }) => {
  const result = await forceCleanup({ userId: user.id, key: body.s3_key });
  await auditRecording(request, user.id, "recording.reset", String(body.s3_key));
  return apiJson(result);
});
