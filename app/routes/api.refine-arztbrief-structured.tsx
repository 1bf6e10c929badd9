import { optionalText, requiredText } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditLetter } from "~/services/audit/events.server";
import {
  clientTranscriptFrom,
  instructionFrom,
  refinementLanguageFrom,
  refineStructuredCall,
} from "~/services/letters/refinement.server";

// SPEC §7 POST /api/refine-arztbrief-structured { arztbrief_text, query, language_code, section_context?,
// transcript_data } → { refined_arztbrief }. Stateless: nothing is saved (the editor's refinement panel
// makes a proposal the doctor accepts instead). Rate-limited per user.
export const action = apiPost(async ({ request, user, body }) => {
  // In the order the call has always refused them: the instruction, the text, then the optional fields.
  const query = instructionFrom(requiredText(body, "query", "letters:errors.instructionRequired"));
  const text = requiredText(body, "arztbrief_text", "letters:errors.textRequired");
  const sectionTitle = optionalText(body, "section_context")?.trim().slice(0, 200) || undefined;
  const result = await refineStructuredCall({
    userId: user.id,
    query,
    text,
    sectionTitle,
    language: refinementLanguageFrom(body),
    transcript: clientTranscriptFrom(body.transcript_data),
  });
  await auditLetter(request, user.id, "letter.refine");
  return apiJson(result);
});
