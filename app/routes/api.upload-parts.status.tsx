import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { uploadStatus } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/status { key } → { upload_id, part_size, part_count, file_size, parts: [{ part_number,
// size }] }: the parts the store already holds, so an interrupted upload sends only the others.
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "key", "recordings:errors.fileKeyRequired");
  const result = await uploadStatus({ userId: user.id, key });
  await auditRecording(request, user.id, "recording.upload-status", key);
  return apiJson(result);
});
