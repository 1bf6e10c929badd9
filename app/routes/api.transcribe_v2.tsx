import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { requestTranscription } from "~/services/transcription/transcription.server";

// SPEC §7 POST /api/transcribe_v2 { s3_key, metadata? } → { job_name }. Idempotent: a retry while the
// run is queued or running, or after it completed, answers the same job_name and starts nothing.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await requestTranscription({ userId: user.id, key: body.s3_key, metadata: body.metadata });
  await auditRecording(request, user.id, "transcription.request", String(body.s3_key));
  return apiJson(result);
});
