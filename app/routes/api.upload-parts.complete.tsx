import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { completeMultipartUpload } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/complete { key } → { success, key }. Joins the parts; the client then calls
// update-file-metadata as after a single PUT, which checks the bytes. Safe to retry.
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "key", "recordings:errors.fileKeyRequired");
  const result = await completeMultipartUpload({ userId: user.id, key });
  await auditRecording(request, user.id, "recording.upload-complete", result.key);
  return apiJson(result);
});
