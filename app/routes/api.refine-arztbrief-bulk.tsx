import { apiJson, apiPost } from "~/services/web/api.server";
import { auditLetter } from "~/services/audit/events.server";
import { refineBulkCall } from "~/services/letters/refinement.server";

// SPEC §7 POST /api/refine-arztbrief-bulk { arztbrief_content, query, language_code, transcript_data }
// → { refined_content }: every section refined in one call, titles and order kept. Nothing is saved.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await refineBulkCall({ userId: user.id, body });
  await auditLetter(request, user.id, "letter.refine_bulk");
  return apiJson(result);
});
