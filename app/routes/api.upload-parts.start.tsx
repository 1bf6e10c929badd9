import { optionalText } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { fileSizeFrom, startMultipartUpload } from "~/services/recordings/multipart.server";

// POST /api/upload-parts/start { file_name, file_type, file_size, language_code, additional_context? }
// → { key, record_id, context_uploaded, upload_id, part_size, part_count }. The resumable variant of
// get-upload-url (README "Resumable uploads"); the key, part size and part count are the server's. `consent` as
// for get-upload-url.
export const action = apiPost(async ({ request, user, body }) => {
  const fileName = optionalText(body, "file_name");
  const languageCode = optionalText(body, "language_code");
  const additionalContext = optionalText(body, "additional_context");
  // After the text fields, before the type and the rest of the slot's checks, as it always was.
  const fileSize = fileSizeFrom(body.file_size);
  const upload = await startMultipartUpload({
    userId: user.id,
    fileName,
    fileType: body.file_type,
    fileSize,
    languageCode,
    additionalContext,
    consent: body.consent,
  });
  await auditRecording(request, user.id, "recording.upload-slot", upload.record_id);
  return apiJson(upload);
});
