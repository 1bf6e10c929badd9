import { requiredText } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditLetter } from "~/services/audit/events.server";
import {
  bulkSectionsFrom,
  clientTranscriptFrom,
  instructionFrom,
  refinementLanguageFrom,
  refineBulkCall,
} from "~/services/letters/refinement.server";

// SPEC §7 POST /api/refine-arztbrief-bulk { arztbrief_content, query, language_code, transcript_data }
// → { refined_content }: every section refined in one call, titles and order kept. Nothing is saved.
export const action = apiPost(async ({ request, user, body }) => {
  // In the order the call has always refused them: the instruction, the content, then the language.
  const query = instructionFrom(requiredText(body, "query", "letters:errors.instructionRequired"));
  const { sections, asList } = bulkSectionsFrom(body.arztbrief_content);
  const result = await refineBulkCall({
    userId: user.id,
    query,
    sections,
    asList,
    language: refinementLanguageFrom(body),
    transcript: clientTranscriptFrom(body.transcript_data),
  });
  await auditLetter(request, user.id, "letter.refine_bulk");
  return apiJson(result);
});
