import type { TFunction } from "i18next";
import type { ReviewItem } from "~/services/transcription/corrections";
import { paragraphSegmentId } from "~/services/transcription/segments";
import type { SpeakerName, TranscriptDocument } from "~/services/speech/transcript-format";

// What the transcript viewer shows of the corrections (issue 24): the speakers with the names the doctor gave them (in
// the page's language: a role reads "Ärztin/Arzt" or "Doctor"), every paragraph's segment id, and the one review item
// the address asks for (`?review=<n>`, from 1), with the stretch of audio around it. Only what the screen shows.

/** Seconds of audio before and after the word the review plays (a media fragment, so no script is needed). */
export const REVIEW_AUDIO_MARGIN = 1;

export type ViewerSpeaker = { speaker: string; number: number; label: string; role: string; name: string };

function round(seconds: number) {
  return Math.round(seconds * 100) / 100;
}

export function speakerViews(document: TranscriptDocument, t: TFunction): ViewerSpeaker[] {
  const names = new Map<string, SpeakerName>(Object.entries(document.speaker_names ?? {}));
  const seen = new Map<string, number>();
  for (const turn of document.turns) if (!seen.has(turn.speaker)) seen.set(turn.speaker, turn.speaker_number);
  return [...seen].map(([speaker, number]) => {
    const given = names.get(speaker);
    const label =
      given?.name || (given?.role ? t(`corrections.roles.${given.role}`) : t("viewer.speaker", { n: number }));
    return { speaker, number, label, role: given?.role ?? "", name: given?.name ?? "" };
  });
}

/** The turns as the viewer renders them: each with its speaker's label and its paragraphs' segment ids. */
export function turnViews(document: TranscriptDocument, speakers: ViewerSpeaker[]) {
  const labels = new Map(speakers.map((s) => [s.speaker, s.label]));
  return document.turns.map((turn, i) => ({
    speaker: turn.speaker,
    number: turn.speaker_number,
    label: labels.get(turn.speaker) ?? "",
    start: turn.start,
    paragraphs: turn.paragraphs.map((words, j) => ({ id: paragraphSegmentId(turn, i, j), words })),
  }));
}

/** The review position of `?review=`: 1 … total (a number past the end shows the last item), or null. */
export function reviewPosition(value: string | null, total: number) {
  if (value === null) return null;
  const n = /^\d{1,6}$/.test(value) ? Number(value) : 1;
  return Math.min(Math.max(n, 1), Math.max(total, 1));
}

export function reviewView(items: ReviewItem[], position: number, audioUrl: string | null, t: TFunction) {
  const item = items[position - 1];
  if (!item) return { position, total: items.length, item: null, audio: null };
  const from = round(Math.max(0, item.start - REVIEW_AUDIO_MARGIN));
  const to = round(item.end + REVIEW_AUDIO_MARGIN);
  return {
    position,
    total: items.length,
    item: {
      segment: item.word.segment,
      index: item.word.index,
      text: item.text,
      start: item.start,
      percent: Math.round(item.confidence * 100),
      level: item.confidenceLevel,
      reasons: item.reasons.map((reason) => t(`corrections.reasons.${reason}`)),
      before: item.before,
      after: item.after,
      afterJoins: item.afterJoins,
      occurrences: item.occurrences,
    },
    audio: audioUrl ? `${audioUrl}#t=${from},${to}` : null,
  };
}

export type ReviewView = ReturnType<typeof reviewView>;
