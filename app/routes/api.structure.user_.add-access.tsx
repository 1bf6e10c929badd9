import { apiJson, apiPost } from "~/services/web/api.server";
import { auditTemplate } from "~/services/audit/events.server";
import { languageFromParam, requiredText } from "~/services/templates/structure-api.server";
import { addTemplateAccess } from "~/services/templates/templates.server";

// SPEC §7 POST /api/structure/user/add-access { template_id, language_code }
export const action = apiPost(async ({ request, user, body }) => {
  const templateId = requiredText(body.template_id);
  await addTemplateAccess({ userId: user.id, templateId, language: languageFromParam(body.language_code) });
  await auditTemplate(request, user.id, "template.add-access", templateId);
  return apiJson({ success: true });
});
