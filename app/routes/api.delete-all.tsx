import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/api.server";
import { audit } from "~/services/audit.server";
import { deleteAll } from "~/services/recordings.server";

// SPEC §7 POST /api/delete-all { s3_key, transcript_key, arztbrief_key }: the server
// finds the transcript and letters itself from the recording it owns.
export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const body = await readJsonBody(request);
  const result = await deleteAll({ userId: user.id, key: body.s3_key });
  await audit({
    userId: user.id,
    action: "recording.delete",
    entityType: "recording",
    entityId: String(body.s3_key),
    outcome: "success",
    request,
  });
  return apiJson(result);
});
