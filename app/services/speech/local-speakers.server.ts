import { DEFAULT_SPEAKER } from "./local-words.server";
import type { EngineWord } from "./types";

// The local engine's speakers: diarization's turns laid over whisper.cpp's words (local-words.server.ts).

/** A speaker turn from diarization: seconds in the recording, the engine's speaker number. */
export type SpeakerTurn = { start: number; end: number; speaker: number };

/**
 * Labels every word with the speaker whose turn overlaps it most (none overlapping: the nearest turn).
 * Speakers are named S1, S2, … in the order they first speak. Punctuation takes its word's speaker.
 * No turns (diarization heard no speaker, e.g. speech below its segmentation model's threshold, while
 * whisper.cpp still found words): one speaker, S1, rather than words without a speaker.
 */
export function assignSpeakers(words: EngineWord[], turns: SpeakerTurn[]): EngineWord[] {
  if (turns.length === 0) return words.map((word) => ({ ...word, speaker: DEFAULT_SPEAKER }));
  const sorted = [...turns].sort((a, b) => a.start - b.start);
  const labels = new Map<number, string>();
  for (const turn of sorted) if (!labels.has(turn.speaker)) labels.set(turn.speaker, `S${labels.size + 1}`);
  let previous: string | null = DEFAULT_SPEAKER;
  return words.map((word) => {
    if (word.punctuation) return { ...word, speaker: previous };
    let best: SpeakerTurn | undefined;
    let bestScore = -Infinity;
    const middle = (word.start + word.end) / 2;
    for (const turn of sorted) {
      const overlap = Math.min(word.end, turn.end) - Math.max(word.start, turn.start);
      // Overlap counts first; without any, the smaller distance to the word's middle wins.
      const distance = middle < turn.start ? turn.start - middle : middle > turn.end ? middle - turn.end : 0;
      const score = overlap > 0 ? overlap : -distance - 1e-9;
      if (score > bestScore) {
        bestScore = score;
        best = turn;
      }
    }
    previous = best ? labels.get(best.speaker)! : DEFAULT_SPEAKER;
    return { ...word, speaker: previous };
  });
}
