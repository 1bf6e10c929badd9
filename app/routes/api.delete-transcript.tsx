import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { deleteTranscript } from "~/services/transcription/transcripts.server";

// SPEC §7 POST /api/delete-transcript { transcript_key } → { success }. The recording stays and can be
// transcribed again.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await deleteTranscript({ userId: user.id, transcriptKey: body.transcript_key });
  await audit({
    userId: user.id,
    action: "transcript.delete",
    entityType: "transcript",
    entityId: String(body.transcript_key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
