import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/api.server";
import { audit } from "~/services/audit.server";
import { extractUploadedPdfs } from "~/services/context-sources.server";

// SPEC §7 POST /api/extract-pdf-from-s3 { s3_keys } → { success, extracted_text, pdfs_processed }
export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const body = await readJsonBody(request);
  const result = await extractUploadedPdfs({ userId: user.id, keys: body.s3_keys });
  await audit({ userId: user.id, action: "context.pdf-extract", entityType: "context", outcome: "success", request });
  return apiJson(result);
});
