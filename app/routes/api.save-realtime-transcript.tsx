import { apiJson, apiPost } from "~/services/web/api.server";
import { saveRealtimeTranscript } from "~/services/live/save.server";

// SPEC §7 POST /api/save-realtime-transcript { transcript_data, display_name, language_code, duration, metadata,
// created_via, additional_context?, original_mime_type? } → { transcript_key, audio_key }. The transcript is
// rebuilt and stored on the server; both keys are the server's (the use case audits).
export const action = apiPost(async ({ request, user, body }) => {
  const saved = await saveRealtimeTranscript({ userId: user.id, request, payload: body });
  return apiJson({ transcript_key: saved.transcript_key, audio_key: saved.audio_key });
});
