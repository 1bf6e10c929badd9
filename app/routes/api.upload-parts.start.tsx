import { optionalText } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { startMultipartUpload } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/start { file_name, file_type, file_size, language_code, additional_context? }
// → { key, record_id, context_uploaded, upload_id, part_size, part_count }. The resumable variant of
// get-upload-url (README "Resumable uploads"); the key, part size and part count are the server's. `consent` as
// for get-upload-url.
export const action = apiPost(async ({ request, user, body }) => {
  const upload = await startMultipartUpload({
    userId: user.id,
    fileName: optionalText(body, "file_name"),
    fileType: body.file_type,
    fileSize: body.file_size,
    languageCode: optionalText(body, "language_code"),
    additionalContext: optionalText(body, "additional_context"),
    consent: body.consent,
  });
  await auditRecording(request, user.id, "recording.upload-slot", upload.record_id);
  return apiJson(upload);
});
