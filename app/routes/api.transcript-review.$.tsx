import type { LoaderFunctionArgs } from "@remix-run/node";
import { apiJson, apiRoute, requireApiUser } from "~/services/web/api.server";
import { auditTranscript } from "~/services/audit/events.server";
import { transcriptReview } from "~/services/transcription/corrections.server";
import { speakerTitle } from "~/services/speech/transcript-format";

// GET /api/transcript-review/{key} (issue 24; key with or without the leading "transcripts/"): the words of the
// current transcript version to look at again, in the order spoken, each with why, where (segment and index, the
// address POST /api/transcript-corrections takes), when (seconds in the audio) and the sentence around it; and the
// speakers with the names the doctor gave them. `version` is the base a correction names.
export const loader = apiRoute(async ({ request, params }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const { row, document, version, items } = await transcriptReview({ userId: user.id, key: params["*"] ?? "" });
  await auditTranscript(request, user.id, "transcript.review.read", row.storage_key);
  const names = new Map(Object.entries(document.speaker_names ?? {}));
  const speakers = new Map<string, number>();
  for (const turn of document.turns) if (!speakers.has(turn.speaker)) speakers.set(turn.speaker, turn.speaker_number);
  return apiJson({
    transcript_key: row.storage_key,
    version,
    speakers: [...speakers].map(([speaker, number]) => ({
      speaker,
      speaker_number: number,
      role: names.get(speaker)?.role ?? null,
      name: names.get(speaker)?.name ?? null,
      label: speakerTitle(document, { speaker, speaker_number: number }),
    })),
    total: items.length,
    items: items.map((item) => ({
      segment: item.word.segment,
      word_index: item.word.index,
      text: item.text,
      start: item.start,
      end: item.end,
      confidence: item.confidence,
      confidence_level: item.confidenceLevel,
      speaker: item.speaker,
      reasons: item.reasons,
      context: { before: item.before, after: item.after },
      occurrences: item.occurrences,
    })),
  });
});
