import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { abortMultipartUpload } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/abort { key } → { success }: the parts held so far and the slot are deleted.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await abortMultipartUpload({ userId: user.id, key: body.key });
  await audit({
    userId: user.id,
    action: "recording.upload-abort",
    entityType: "recording",
    entityId: String(body.key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
