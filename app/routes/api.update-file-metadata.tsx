import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { readMetadata, updateFileMetadata } from "~/services/recordings/metadata.server";

// SPEC §7 POST /api/update-file-metadata { s3_key, metadata }. The first call after
// the upload is where the server checks the stored bytes (type, size, probe).
export const action = apiPost(async ({ request, user, body }) => {
  try {
    // The metadata is checked before the recording is looked up, as it always was; a refusal of either is audited.
    const metadata = readMetadata(body.metadata);
    const key = requiredKey(body, "s3_key", "recordings:errors.fileKeyRequired");
    const result = await updateFileMetadata({ userId: user.id, key, metadata });
    await auditRecording(request, user.id, "recording.metadata", result.key);
    return apiJson(result);
  } catch (error) {
    await auditRecording(request, user.id, "recording.metadata", undefined, "failure");
    throw error;
  }
});
