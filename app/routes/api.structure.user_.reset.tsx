import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, requireApiUser } from "~/services/api.server";
import { audit } from "~/services/audit.server";
import { languageFromParam } from "~/services/structure-api.server";
import { resetUserStructure } from "~/services/templates.server";

// SPEC §7 POST /api/structure/user/reset?template=&language= — back to the system default.
export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const url = new URL(request.url);
  const templateId = url.searchParams.get("template")?.trim() || "default";
  await resetUserStructure({
    userId: user.id,
    templateId,
    language: languageFromParam(url.searchParams.get("language")),
  });
  await audit({
    userId: user.id,
    action: "template.structure.reset",
    entityType: "template",
    entityId: templateId,
    outcome: "success",
    request,
  });
  return apiJson({ success: true });
});
