import type { LiveResult, TranscriptMessage } from "../protocol";

// Turning the engine's results into text a clinician reads. Pure, so the server-rendered widget (a
// resumed session) and the live client label speakers alike.

export type Segment = { speaker: string; text: string };

/** Words with spaces between them; punctuation attaches as the engine says (to the previous word by default). */
export function joinResults(results: LiveResult[]): string {
  let text = "";
  let glueNext = false;
  for (const result of results) {
    const content = result.alternatives?.[0]?.content ?? "";
    if (!content) continue;
    const attaches = result.attaches_to ?? (result.type === "punctuation" ? "previous" : "none");
    const glue = !text || glueNext || attaches === "previous" || attaches === "both";
    text += (glue ? "" : " ") + content;
    glueNext = attaches === "next" || attaches === "both";
  }
  return text;
}

/** A final, split where the speaker changes (diarization); punctuation stays with the words before it. */
export function segmentsOf(message: TranscriptMessage): Segment[] {
  if (!message.results?.length) {
    const text = message.metadata?.transcript?.trim() ?? "";
    return text ? [{ speaker: "", text }] : [];
  }
  const groups: Array<{ speaker: string; results: LiveResult[] }> = [];
  for (const result of message.results) {
    const speaker = result.alternatives?.[0]?.speaker ?? "";
    const last = groups[groups.length - 1];
    if (last && (speaker === last.speaker || result.type === "punctuation")) last.results.push(result);
    else groups.push({ speaker, results: [result] });
  }
  return groups.map((g) => ({ speaker: g.speaker, text: joinResults(g.results) })).filter((s) => s.text);
}

/** The text of a (partial or final) result, for dictation. */
export function textOf(message: TranscriptMessage): string {
  return message.metadata?.transcript?.trim() || joinResults(message.results ?? []);
}

/** "S2" → 2; the engine's "UU" (unknown) and anything else → null. */
export function speakerNumber(speaker: string): number | null {
  const match = /^S(\d+)$/.exec(speaker);
  return match ? Number(match[1]) : null;
}

/** Elapsed time as m:ss (h:mm:ss from an hour), from the session's buffer count or seconds. */
export function formatDuration(seconds: number) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}
