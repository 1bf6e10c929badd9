import { apiJson, apiPost } from "~/services/web/api.server";
import { auditContext } from "~/services/audit/events.server";
import { extractUploadedPdfs, pdfKeysFrom } from "~/services/letters/context-sources.server";

// SPEC §7 POST /api/extract-pdf-from-s3 { s3_keys } → { success, extracted_text, pdfs_processed }
export const action = apiPost(async ({ request, user, body }) => {
  const result = await extractUploadedPdfs({ userId: user.id, keys: pdfKeysFrom(body.s3_keys) });
  await auditContext(request, user.id, "context.pdf-extract");
  return apiJson(result);
});
