import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { updateFileMetadata } from "~/services/recordings/metadata.server";

// SPEC §7 POST /api/update-file-metadata { s3_key, metadata }. The first call after
// the upload is where the server checks the stored bytes (type, size, probe).
export const action = apiPost(async ({ request, user, body }) => {
  try {
    const result = await updateFileMetadata({ userId: user.id, key: body.s3_key, metadata: body.metadata });
    await audit({
      userId: user.id,
      action: "recording.metadata",
      entityType: "recording",
      entityId: result.key,
      outcome: "success",
      request,
    });
    return apiJson(result);
  } catch (error) {
    await audit({
      userId: user.id,
      action: "recording.metadata",
      entityType: "recording",
      outcome: "failure",
      request,
    });
    throw error;
  }
});
