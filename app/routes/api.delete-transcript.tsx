import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditTranscript } from "~/services/audit/events.server";
import { deleteTranscript } from "~/services/transcription/transcripts.server";

// SPEC §7 POST /api/delete-transcript { transcript_key } → { success }. The recording stays and can be
// transcribed again.
export const action = apiPost(async ({ request, user, body }) => {
  const transcriptKey = requiredKey(body, "transcript_key", "transcriptions:errors.transcriptKeyRequired");
  const result = await deleteTranscript({ userId: user.id, transcriptKey });
  await auditTranscript(request, user.id, "transcript.delete", transcriptKey);
  return apiJson(result);
});
