import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { auditTranscript } from "~/services/audit/events.server";
import { getTranscript } from "~/services/transcription/transcripts.server";

// SPEC §7 GET /api/transcript_v2/{key} (with or without the leading "transcripts/"). The text fields
// are plain text except `highlighted_transcript`, which is escaped markup: nothing spoken becomes HTML.
export const loader = apiRoute(async ({ request, params }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const { row, document } = await getTranscript({ userId: user.id, key: params["*"] ?? "" });
  await auditTranscript(request, user.id, "transcript.read", row.storage_key);
  return apiJson({
    transcript_key: row.storage_key,
    source_key: row.source_key,
    original_filename: row.original_filename,
    display_name: row.display_name,
    language_code: document.language_code,
    created_at: document.created_at,
    raw_transcript: document.raw_transcript,
    formatted_transcript: document.formatted_transcript,
    highlighted_transcript: document.highlighted_transcript,
    speakers_info: document.speakers_info,
    words: document.turns.flatMap((turn) => turn.paragraphs.flat().map((word) => ({ ...word, speaker: turn.speaker }))),
    tags: row.tags,
  });
});
