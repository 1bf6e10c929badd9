import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { languageFromParam, requiredText } from "~/services/templates/structure-api.server";
import { removeTemplateAccess } from "~/services/templates/templates.server";

// SPEC §7 POST /api/structure/user/remove-access { template_id, language_code }
export const action = apiPost(async ({ request, user, body }) => {
  const templateId = requiredText(body.template_id);
  await removeTemplateAccess({ userId: user.id, templateId, language: languageFromParam(body.language_code) });
  await audit({
    userId: user.id,
    action: "template.remove-access",
    entityType: "template",
    entityId: templateId,
    outcome: "success",
    request,
  });
  return apiJson({ success: true });
});
