import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { createPartUrls } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/urls { key, part_numbers } → { parts: [{ part_number, url }] }: short-lived PUT
// URLs, one per part, straight to object storage.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await createPartUrls({ userId: user.id, key: body.key, partNumbers: body.part_numbers });
  await audit({
    userId: user.id,
    action: "recording.upload-part-urls",
    entityType: "recording",
    entityId: String(body.key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
