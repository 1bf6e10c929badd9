import { apiJson, apiPost } from "~/services/web/api.server";
import { auditTemplate } from "~/services/audit/events.server";
import { languageFromParam, requiredText } from "~/services/templates/structure-api.server";
import { removeTemplateAccess } from "~/services/templates/templates.server";

// SPEC §7 POST /api/structure/user/remove-access { template_id, language_code }
export const action = apiPost(async ({ request, user, body }) => {
  const templateId = requiredText(body.template_id);
  await removeTemplateAccess({ userId: user.id, templateId, language: languageFromParam(body.language_code) });
  await auditTemplate(request, user.id, "template.remove-access", templateId);
  return apiJson({ success: true });
});
