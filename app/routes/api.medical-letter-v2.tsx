import { optionalObject, optionalText, requiredKey } from "~/services/web/api-fields.server";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditRecording } from "~/services/audit/events.server";
import { requestLetter } from "~/services/letters/letters.server";

// SPEC §7 POST /api/medical-letter-v2 { transcript_data, original_filename, source_key, metadata? }. The letter
// is written from the transcript stored for `source_key` — `transcript_data` from the client is never used,
// so nobody can have a letter written from text that is not their recording's. The answer comes at once:
// { key, status: "processing" | "completed", job_name }; the list and GET /api/arztbrief/{key} follow it.
// Idempotent: a retry while the job runs, or once the letter exists, starts nothing new.
export const action = apiPost(async ({ request, user, body }) => {
  // The metadata is refused before the key, as it always was.
  const metadata = optionalObject(body, "metadata") ?? {};
  const templateId = optionalText(metadata, "template_id", "metadata.template_id");
  const sourceKey = requiredKey(body, "source_key", "recordings:errors.fileKeyRequired");
  const result = await requestLetter({ userId: user.id, sourceKey, kind: "create", templateId });
  await auditRecording(request, user.id, "letter.create", sourceKey);
  return apiJson({ success: true, ...result }, { status: result.status === "processing" ? 202 : 200 });
});
