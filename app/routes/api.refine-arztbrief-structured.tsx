import { apiJson, apiPost } from "~/services/web/api.server";
import { auditLetter } from "~/services/audit/events.server";
import { refineStructuredCall } from "~/services/letters/refinement.server";

// SPEC §7 POST /api/refine-arztbrief-structured { arztbrief_text, query, language_code, section_context?,
// transcript_data } → { refined_arztbrief }. Stateless: nothing is saved (the editor's refinement panel
// makes a proposal the doctor accepts instead). Rate-limited per user.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await refineStructuredCall({ userId: user.id, body });
  await auditLetter(request, user.id, "letter.refine");
  return apiJson(result);
});
