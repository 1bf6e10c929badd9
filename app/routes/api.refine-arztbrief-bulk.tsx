import { apiJson, apiPost } from "~/services/web/api.server";
import { audit } from "~/services/audit/audit.server";
import { refineBulkCall } from "~/services/letters/refinement.server";

// SPEC §7 POST /api/refine-arztbrief-bulk { arztbrief_content, query, language_code, transcript_data }
// → { refined_content }: every section refined in one call, titles and order kept. Nothing is saved.
export const action = apiPost(async ({ request, user, body }) => {
  const result = await refineBulkCall({ userId: user.id, body });
  await audit({ userId: user.id, action: "letter.refine_bulk", entityType: "letter", outcome: "success", request });
  return apiJson(result);
});
