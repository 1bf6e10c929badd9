import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { uploadStatus } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/status { key } → { upload_id, part_size, part_count, file_size, parts: [{ part_number,
// size }] }: the parts the store already holds, so an interrupted upload sends only the others.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await uploadStatus({ userId: user.id, key: body.key });
  await audit({
    userId: user.id,
    action: "recording.upload-status",
    entityType: "recording",
    entityId: String(body.key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
