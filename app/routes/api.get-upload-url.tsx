import { optionalText, requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { createRealtimeUploadSlot } from "~/services/live/save-upload.server";
import { createUploadSlot } from "~/services/recordings/recordings.server";

// SPEC §7 POST /api/get-upload-url { file_name, file_type, language_code, additional_context? }
// → { url, key, record_id, context_uploaded }. The key is made on the server. Skribent also takes the patient's
// consent, `consent: { kind: "oral" | "written", given_by: "patient" | "representative" }` (issue 22): optional
// unless CONSENT_REQUIRED=1.
// Live variant { file_name, file_type, specific_key }: the browser's copy of a live recording this user saved
// (save-realtime-transcript); the recorder's formats are accepted here only.
export const action = apiPost(async ({ request, user, body }) => {
  // Text or absent, whichever variant: a client sending another type learns so (ASVS 15.3.5).
  const fileName = optionalText(body, "file_name");
  const languageCode = optionalText(body, "language_code");
  const additionalContext = optionalText(body, "additional_context");
  if (body.specific_key !== undefined) {
    const live = await createRealtimeUploadSlot({
      userId: user.id,
      specificKey: requiredKey(body, "specific_key", "recordings:errors.fileKeyRequired"),
      fileType: body.file_type,
    });
    await auditRecording(request, user.id, "recording.live-upload-slot", live.record_id);
    return apiJson({
      url: live.url,
      key: live.key,
      record_id: live.record_id,
      context_uploaded: live.context_uploaded,
    });
  }
  const slot = await createUploadSlot({
    userId: user.id,
    fileName,
    fileType: body.file_type,
    languageCode,
    additionalContext,
    consent: body.consent,
  });
  await auditRecording(request, user.id, "recording.upload-slot", slot.record_id);
  return apiJson({ url: slot.url, key: slot.key, record_id: slot.record_id, context_uploaded: slot.context_uploaded });
});
