import { apiJson, apiPost } from "~/services/web/api.server";
import { auditTemplate } from "~/services/audit/events.server";
import { languageFromParam } from "~/services/templates/structure-api.server";
import { resetUserStructure } from "~/services/templates/templates.server";

// SPEC §7 POST /api/structure/user/reset?template=&language= — back to the system default.
export const action = apiPost(
  async ({ request, user }) => {
    const url = new URL(request.url);
    const templateId = url.searchParams.get("template")?.trim() || "default";
    await resetUserStructure({
      userId: user.id,
      templateId,
      language: languageFromParam(url.searchParams.get("language")),
    });
    await auditTemplate(request, user.id, "template.structure.reset", templateId);
    return apiJson({ success: true });
  },
  { body: false },
);
