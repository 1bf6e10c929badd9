import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { completeMultipartUpload } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/complete { key } → { success, key }. Joins the parts; the client then calls
// update-file-metadata as after a single PUT, which checks the bytes. Safe to retry.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await completeMultipartUpload({ userId: user.id, key: body.key });
  await audit({
    userId: user.id,
    action: "recording.upload-complete",
    entityType: "recording",
    entityId: result.key,
    outcome: "success",
    request,
  });
  return apiJson(result);
});
