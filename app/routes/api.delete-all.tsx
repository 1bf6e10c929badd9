import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { deleteAll } from "~/services/recordings/removal.server";

// SPEC §7 POST /api/delete-all { s3_key, transcript_key, arztbrief_key }: the server
// finds the transcript and letters itself from the recording it owns.
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "s3_key", "recordings:errors.fileKeyRequired");
  const result = await deleteAll({ userId: user.id, key });
  await auditRecording(request, user.id, "recording.delete", key);
  return apiJson(result);
});
