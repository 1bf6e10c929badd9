import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { languageFromParam } from "~/services/templates/structure-api.server";
import { assertUserTemplatesEnabled, getRepository } from "~/services/templates/templates.server";

// SPEC §7 GET /api/structure/repository?language= → repository templates (element names only)
export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  assertUserTemplatesEnabled();
  const language = languageFromParam(new URL(request.url).searchParams.get("language"));
  const templates = await getRepository({ userId: user.id, language });
  return apiJson({
    templates: templates.map((t) => ({
      id: t.id,
      template_id: t.id,
      name: t.name,
      template_name: t.name,
      description: t.description,
      language_code: language,
      organization: t.organization,
      isSystem: true,
      added: t.added,
      structure_elements: t.elementNames.map((name) => ({ name })),
    })),
  });
});
