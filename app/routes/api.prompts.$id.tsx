import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { auditPrompt } from "~/services/audit/events.server";
import { removePrompt } from "~/services/letters/saved-prompts.server";

// SPEC §7 DELETE /api/prompts/{id}: only the owner's own prompt (another user's id is "not found").
export const loader = apiRoute(async () => {
  throw new ApiError(405, "Method not allowed");
});

export const action = apiRoute(async ({ request, params }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "DELETE") throw new ApiError(405, "Method not allowed");
  const result = await removePrompt({ userId: user.id, id: params.id ?? "" });
  await auditPrompt(request, user.id, "prompt.delete", params.id);
  return apiJson(result);
});
