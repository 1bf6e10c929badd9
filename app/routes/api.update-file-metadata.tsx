import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { updateFileMetadata } from "~/services/recordings/metadata.server";

// SPEC §7 POST /api/update-file-metadata { s3_key, metadata }. The first call after
// the upload is where the server checks the stored bytes (type, size, probe).
export const action = apiPost(async ({ request, user, body }) => {
  try {
    const result = await updateFileMetadata({ userId: user.id, key: body.s3_key, metadata: body.metadata });
    await auditRecording(request, user.id, "recording.metadata", result.key);
    return apiJson(result);
  } catch (error) {
    await auditRecording(request, user.id, "recording.metadata", undefined, "failure");
    throw error;
  }
});
