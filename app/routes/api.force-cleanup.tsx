import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/api.server";
import { audit } from "~/services/audit.server";
import { forceCleanup } from "~/services/recordings.server";

// SPEC §7 POST /api/force-cleanup { s3_key } → { cleanup_results }
export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const body = await readJsonBody(request);
  const result = await forceCleanup({ userId: user.id, key: body.s3_key });
  await audit({
    userId: user.id,
    action: "recording.reset",
    entityType: "recording",
    entityId: String(body.s3_key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
