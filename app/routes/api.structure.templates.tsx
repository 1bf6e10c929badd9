import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { languageFromParam, templateJson } from "~/services/templates/structure-api.server";
import { listUserTemplates } from "~/services/templates/templates.server";

// SPEC §7 GET /api/structure/templates?language= → templates
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const language = languageFromParam(new URL(request.url).searchParams.get("language"));
  const { system, custom } = await listUserTemplates({ userId: user.id, language });
  return apiJson({ templates: [...system, ...custom].map(templateJson) });
});
