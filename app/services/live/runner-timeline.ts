import type { LiveResult, TranscriptMessage } from "~/live/protocol";
import { joinResults } from "./segments";

// A run's results on the session's time line (ADR 0013). An engine counts seconds from the start of its own
// run; the runner adds where that run's audio begins on the session. A run that resumes re-feeds some audio
// that is already final (the engine needs the context), so until its first new word it drops what it says
// again: a word counts as new when more than half of it lies after the end of what is final (its start is then
// moved to that end, so no two words overlap); a punctuation mark goes with the word before it. Pure, so it is
// tested without a database.

function round(t: number) {
  return Math.round(t * 1000) / 1000;
}

/** The message with every time moved by `offset` seconds, to the millisecond. */
export function shift(message: TranscriptMessage, offset: number): TranscriptMessage {
  const at = (t: number) => round(t + offset);
  return {
    ...message,
    metadata: {
      ...message.metadata,
      start_time: at(message.metadata.start_time),
      end_time: at(message.metadata.end_time),
    },
    results: message.results.map((r: LiveResult) => ({ ...r, start_time: at(r.start_time), end_time: at(r.end_time) })),
  };
}

/**
 * Drops the results of a message that repeat what is final up to `finalUntil` (seconds on the session's time
 * line; null: nothing to drop). Returns the message (the same one when nothing was dropped, null when nothing
 * is left of a message that had results) and the point still to drop before for the next message — null once
 * a new word came, since everything after it is new too.
 */
export function keepAfter(
  message: TranscriptMessage,
  finalUntil: number | null,
): { message: TranscriptMessage | null; finalUntil: number | null } {
  if (finalUntil === null || message.results.length === 0) return { message, finalUntil };
  let until: number | null = finalUntil;
  const results: LiveResult[] = [];
  for (const result of message.results) {
    if (until === null) results.push(result);
    else if (result.type === "word" && (result.start_time + result.end_time) / 2 > until) {
      results.push({ ...result, start_time: Math.max(result.start_time, until) });
      until = null;
    }
  }
  if (results.length === 0) return { message: null, finalUntil: until };
  const start = results[0].start_time;
  const metadata = { ...message.metadata, start_time: start, transcript: joinResults(results) };
  return { message: { ...message, metadata, results }, finalUntil: until };
}

/** Where a final's words end (seconds), or null for a final without results. */
export function finalEnd(message: TranscriptMessage): number | null {
  if (message.results.length === 0) return null;
  return Math.max(...message.results.map((r) => r.end_time));
}
