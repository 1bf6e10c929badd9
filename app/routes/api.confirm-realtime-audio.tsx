import { requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { confirmRealtimeAudio } from "~/services/live/save-upload.server";

// POST /api/confirm-realtime-audio { key } → { success, key, duration_seconds } (Skribent's own, issue 7): after
// the browser's PUT of its copy of a live recording, the server checks it and makes it the recording's audio.
// A rejected file answers 400 and the recording keeps the audio it had (the use case audits).
export const action = apiPost(async ({ request, user, body }) => {
  const key = requiredKey(body, "key", "recordings:errors.fileKeyRequired");
  const result = await confirmRealtimeAudio({ userId: user.id, key, request });
  return apiJson(result);
});
