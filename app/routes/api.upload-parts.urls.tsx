import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { createPartUrls } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/urls { key, part_numbers } → { parts: [{ part_number, url }] }: short-lived PUT
// URLs, one per part, straight to object storage.
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "key", "recordings:errors.fileKeyRequired");
  const result = await createPartUrls({ userId: user.id, key, partNumbers: body.part_numbers });
  await auditRecording(request, user.id, "recording.upload-part-urls", key);
  return apiJson(result);
});
