import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { renameFile } from "~/services/recordings/metadata.server";

// SPEC §7 POST /api/rename-file { s3_key, display_name }
export const action = apiPost(async ({ request, user, body }) => {
  const result = await renameFile({ userId: user.id, key: body.s3_key, displayName: body.display_name });
  await audit({
    userId: user.id,
    action: "recording.rename",
    entityType: "recording",
    entityId: String(body.s3_key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
