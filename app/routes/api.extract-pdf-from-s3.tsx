import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { extractUploadedPdfs } from "~/services/letters/context-sources.server";

// SPEC §7 POST /api/extract-pdf-from-s3 { s3_keys } → { success, extracted_text, pdfs_processed }
export const action = apiPost(async ({ request, user, body }) => {
  const result = await extractUploadedPdfs({ userId: user.id, keys: body.s3_keys });
  await audit({ userId: user.id, action: "context.pdf-extract", entityType: "context", outcome: "success", request });
  return apiJson(result);
});
