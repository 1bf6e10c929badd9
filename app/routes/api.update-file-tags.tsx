import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/api.server";
import { audit } from "~/services/audit.server";
import { updateFileTags } from "~/services/recordings.server";

// SPEC §7 POST /api/update-file-tags { s3_key, tags, update_all_related }
export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const body = await readJsonBody(request);
  const result = await updateFileTags({ userId: user.id, key: body.s3_key, tags: body.tags });
  await audit({
    userId: user.id,
    action: "recording.tags",
    entityType: "recording",
    entityId: String(body.s3_key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
