import type { LiveResult, ServerMessage } from "~/live/protocol";

// Finals → what people read (the paused-session note, the session view) and SPEC §3's "Live transcript record"
// (what saving stores). Pure, so the browser-free tests can cover it.

export type LiveSegment = { speaker: string; text: string; start: number; end: number };

/** Joins results the way the language pack does: no space before punctuation that attaches to the previous word. */
export function joinResults(results: LiveResult[]) {
  let text = "";
  for (const result of results) {
    const content = result.alternatives[0]?.content ?? "";
    if (!content) continue;
    const attaches = result.type === "punctuation" || result.attaches_to === "previous";
    text += text && !attaches ? ` ${content}` : content;
  }
  return text;
}

/** Every final's results in order, each word's speaker carried to the punctuation after it. */
export function resultsOf(finals: ServerMessage[]): LiveResult[] {
  const results: LiveResult[] = [];
  for (const message of finals) if (message.message === "AddTranscript") results.push(...message.results);
  return results;
}

/** Consecutive results of one speaker become one segment. */
export function segmentsOf(finals: ServerMessage[]): LiveSegment[] {
  const segments: Array<LiveSegment & { results: LiveResult[] }> = [];
  for (const result of resultsOf(finals)) {
    const speaker = result.alternatives[0]?.speaker ?? segments.at(-1)?.speaker ?? "S1";
    const last = segments.at(-1);
    if (last && (last.speaker === speaker || result.type === "punctuation")) {
      last.results.push(result);
      last.end = Math.max(last.end, result.end_time);
    } else {
      segments.push({ speaker, text: "", start: result.start_time, end: result.end_time, results: [result] });
    }
  }
  return segments.map(({ results, ...segment }) => ({ ...segment, text: joinResults(results) }));
}

/**
 * SPEC §3 "Live transcript record": results (each with alternatives — the first carrying content and speaker —
 * plus start_time and end_time), job and speaker_stats.
 */
export function liveRecord(args: {
  finals: ServerMessage[];
  startedAt: Date;
  endedAt: Date;
  language: string;
  seconds: number;
  name: string;
}) {
  const results = resultsOf(args.finals);
  const stats: Record<
    string,
    { totalSegments: number; totalDuration: number; firstAppearance: number; wordCount: number }
  > = {};
  for (const segment of segmentsOf(args.finals)) {
    const entry = (stats[segment.speaker] ??= {
      totalSegments: 0,
      totalDuration: 0,
      firstAppearance: segment.start,
      wordCount: 0,
    });
    entry.totalSegments += 1;
    entry.totalDuration = Math.round((entry.totalDuration + segment.end - segment.start) * 1000) / 1000;
    entry.wordCount += segment.text.split(/\s+/).filter((w) => /\w/.test(w)).length;
  }
  return {
    results,
    job: {
      started_at: args.startedAt.toISOString(),
      ended_at: args.endedAt.toISOString(),
      data_name: args.name,
      language: args.language,
      duration: Math.round(args.seconds),
    },
    speaker_stats: stats,
  };
}
