import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { readMetadata } from "~/services/recordings/metadata.server";
import { requestTranscription } from "~/services/transcription/transcription.server";

// SPEC §7 POST /api/transcribe_v2 { s3_key, metadata? } → { job_name }. Idempotent: a retry while the
// run is queued or running, or after it completed, answers the same job_name and starts nothing.
export const action = apiPost(async ({ request, user, body }) => {
  // The metadata is checked before the recording is looked up, as it always was.
  const metadata = readMetadata(body.metadata);
  const key = requiredKey(body, "s3_key", "recordings:errors.fileKeyRequired");
  const result = await requestTranscription({ userId: user.id, key, metadata });
  await auditRecording(request, user.id, "transcription.request", key);
  return apiJson(result);
});
