import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { forceCleanup } from "~/services/recordings/removal.server";

// SPEC §7 POST /api/force-cleanup { s3_key } → { cleanup_results }
export const action = apiPost(async ({ request, user, body }) => {
  const result = await forceCleanup({ userId: user.id, key: body.s3_key });
  await audit({
    userId: user.id,
    action: "recording.reset",
    entityType: "recording",
    entityId: String(body.s3_key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
