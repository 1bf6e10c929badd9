import type { LiveResult, TranscriptMessage } from "~/live/protocol";
import type { EngineWord } from "~/services/speech/types";

// EngineWords (what the batch engines and whisper.cpp's token mapping produce) in the Speechmatics realtime
// shape the live protocol speaks (PROTOCOLS §2), so the client has one code path whichever engine answers:
// - a word is `type: "word"`; a punctuation word attaches to the word before it (`attaches_to: "previous"`)
//   and carries `is_eos` when it ends a sentence;
// - `metadata.transcript` is the results joined by spaces with no space before punctuation (PROTOCOLS §2,
//   behaviour 8), and `metadata` spans the first result's start to the last result's end;
// - times are rounded to the millisecond: float noise from sample arithmetic (0.30000000000000004) would
//   otherwise reach the wire.

const DEFAULT_SPEAKER = "S1";

const ms = (seconds: number) => Math.round(seconds * 1000) / 1000;

function result(word: EngineWord): LiveResult {
  const alternative = { content: word.text, confidence: word.confidence, speaker: word.speaker ?? DEFAULT_SPEAKER };
  const times = { start_time: ms(word.start), end_time: ms(word.end) };
  if (!word.punctuation) return { type: "word", ...times, alternatives: [alternative] };
  return {
    type: "punctuation",
    ...times,
    attaches_to: "previous",
    is_eos: Boolean(word.endOfSentence),
    alternatives: [alternative],
  };
}

/** The text of results as Speechmatics formats it: spaces between words, none before attached punctuation. */
export function transcriptText(results: LiveResult[]): string {
  let text = "";
  let glued = true; // no space before the first result, nor after one that attaches to the next
  for (const r of results) {
    const mark = r.type === "punctuation" ? r.attaches_to : undefined;
    const space = !glued && mark !== "previous" && mark !== "both";
    text += `${space ? " " : ""}${r.alternatives[0]?.content ?? ""}`;
    glued = mark === "next" || mark === "both";
  }
  return text;
}

/** One message for `words` (in order), or undefined when there are none: an empty final says nothing. */
export function transcriptMessage(
  words: EngineWord[],
  kind: TranscriptMessage["message"] = "AddTranscript",
): TranscriptMessage | undefined {
  const results = words.filter((word) => word.text !== "").map(result);
  if (results.length === 0) return undefined;
  return {
    message: kind,
    metadata: {
      start_time: results[0].start_time,
      end_time: Math.max(...results.map((r) => r.end_time)),
      transcript: transcriptText(results),
    },
    results,
  };
}
