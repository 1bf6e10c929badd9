import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { abortMultipartUpload } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/abort { key } → { success }: the parts held so far and the slot are deleted.
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "key", "recordings:errors.fileKeyRequired");
  const result = await abortMultipartUpload({ userId: user.id, key });
  await auditRecording(request, user.id, "recording.upload-abort", key);
  return apiJson(result);
});
