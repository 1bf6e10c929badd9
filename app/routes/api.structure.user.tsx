import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/web/api.server";
import { auditTemplate } from "~/services/audit/events.server";
import { elementJson, languageFromParam } from "~/services/templates/structure-api.server";
import { getUserStructure, saveUserStructure } from "~/services/templates/templates.server";

// SPEC §7 GET/PUT /api/structure/user?template=&language= — the user's structure
// of one template (template name defaults to "default").
function params(request: Request) {
  const url = new URL(request.url);
  return {
    templateId: url.searchParams.get("template")?.trim() || "default",
    language: languageFromParam(url.searchParams.get("language")),
  };
}

export const loader = apiRoute(async ({ request }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const structure = await getUserStructure({ userId: user.id, ...params(request) });
  return apiJson({ elements: structure.elements.map(elementJson), prompt: structure.prompt });
});

export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "PUT") throw new ApiError(405, "Method not allowed");
  const { templateId, language } = params(request);
  const body = await readJsonBody(request);
  // `structure` is the element list; an object with `elements` is accepted too.
  const structure = body.structure;
  const elements =
    structure && typeof structure === "object" && !Array.isArray(structure) && "elements" in structure
      ? (structure as { elements: unknown }).elements
      : structure;
  const saved = await saveUserStructure({ userId: user.id, templateId, language, elements, prompt: body.prompt });
  await auditTemplate(request, user.id, "template.structure.save", templateId);
  return apiJson({ success: true, elements: saved.elements.map(elementJson), prompt: saved.prompt });
});
