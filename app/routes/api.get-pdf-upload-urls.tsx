import { apiJson, apiPost } from "~/services/web/api.server";
import { auditContext } from "~/services/audit/events.server";
import { createPdfUploadUrls, pdfFileNamesFrom } from "~/services/letters/context-sources.server";

// SPEC §7 POST /api/get-pdf-upload-urls { filenames } → { upload_urls: [{ upload_url, s3_key }] };
// each PDF is then PUT as application/pdf.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await createPdfUploadUrls({ userId: user.id, filenames: pdfFileNamesFrom(body.filenames) });
  await auditContext(request, user.id, "context.pdf-upload-urls");
  return apiJson(result);
});
