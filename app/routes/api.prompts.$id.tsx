import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { removePrompt } from "~/services/letters/saved-prompts.server";

// SPEC §7 DELETE /api/prompts/{id}: only the owner's own prompt (another user's id is "not found").
export const loader = apiRoute(async () => {
  throw new ApiError(405, "Method not allowed");
});

export const action = apiRoute(async ({ request, params }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "DELETE") throw new ApiError(405, "Method not allowed");
  const result = await removePrompt({ userId: user.id, id: params.id });
  await audit({
    userId: user.id,
    action: "prompt.delete",
    entityType: "prompt",
    entityId: params.id,
    outcome: "success",
    request,
  });
  return apiJson(result);
});
