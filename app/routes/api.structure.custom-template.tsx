import type { ActionFunctionArgs } from "@remix-run/node";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "~/services/web/api.server";
import { auditTemplate } from "~/services/audit/events.server";
import { createCustomTemplate, deleteCustomTemplate } from "~/services/templates/custom-templates.server";
import { languageFromParam, requiredText } from "~/services/templates/structure-api.server";

// SPEC §7 POST /api/structure/custom-template { template_id, custom_name, language_code,
// structure_elements, prompt } and DELETE ?template_id=&language_code=
export const action = apiRoute(async ({ request }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method === "POST") {
    const body = await readJsonBody(request);
    const { templateId } = await createCustomTemplate({
      userId: user.id,
      language: languageFromParam(body.language_code),
      templateId: typeof body.template_id === "string" ? body.template_id : null,
      name: body.custom_name,
      description: body.description,
      elements: body.structure_elements,
      prompt: body.prompt,
    });
    await auditTemplate(request, user.id, "template.custom.create", templateId);
    return apiJson({ success: true, template_id: templateId }, { status: 201 });
  }
  if (request.method === "DELETE") {
    const url = new URL(request.url);
    const templateId = requiredText(url.searchParams.get("template_id"));
    await deleteCustomTemplate({
      userId: user.id,
      templateId,
      language: languageFromParam(url.searchParams.get("language_code")),
    });
    await auditTemplate(request, user.id, "template.custom.delete", templateId);
    return apiJson({ success: true });
  }
  throw new ApiError(405, "Method not allowed");
});
