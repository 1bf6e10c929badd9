import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/api.server";
import { audit } from "~/services/audit.server";
import { createPdfUploadUrls } from "~/services/context-sources.server";

// SPEC §7 POST /api/get-pdf-upload-urls { filenames } → { upload_urls: [{ upload_url, s3_key }] };
// each PDF is then PUT as application/pdf.
export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const body = await readJsonBody(request);
  const result = await createPdfUploadUrls({ userId: user.id, filenames: body.filenames });
  await audit({
    userId: user.id,
    action: "context.pdf-upload-urls",
    entityType: "context",
    outcome: "success",
    request,
  });
  return apiJson(result);
});
