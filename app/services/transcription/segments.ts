import {
  joinWords,
  speakerTitle,
  type TranscriptDocument,
  type TranscriptTurn,
} from "~/services/speech/transcript-format";

// A transcript's citable pieces (issue 24): each paragraph of each speaker turn, with a stable id that the
// letter's evidence names and the transcript viewer carries as an anchor, so a sentence of the letter can link to
// "where it was said" with or without JavaScript. The id is the paragraph's position (turn, paragraph) as the engine
// wrote it, kept for the transcript's life: a corrected word changes words, not the turns' shape, and when a paragraph
// moves to another speaker and its turn is split (corrections.ts), the turns carry their paragraphs' old ids
// (`segment_ids`), so a link made before the move still finds its paragraph.

export type TranscriptSegment = {
  /** "t<turn>p<paragraph>", both counted from 0. */
  id: string;
  /** "Sprecher 1" / "Speaker 1", in the transcript's language, or the name the doctor gave the speaker. */
  speaker: string;
  speakerNumber: number;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  text: string;
};

export function segmentId(turn: number, paragraph: number) {
  return `t${turn}p${paragraph}`;
}

/** The id of a turn's paragraph: the one it keeps after a move (`segment_ids`), else its position. */
export function paragraphSegmentId(turn: Pick<TranscriptTurn, "segment_ids">, turnIndex: number, paragraph: number) {
  return turn.segment_ids?.[paragraph] ?? segmentId(turnIndex, paragraph);
}

/** The fragment a link to one segment of the transcript view ends with. */
export function segmentAnchor(id: string) {
  return `seg-${id}`;
}

export function transcriptSegments(
  document: Pick<TranscriptDocument, "turns" | "language_code" | "speaker_names">,
): TranscriptSegment[] {
  return document.turns.flatMap((turn, i) =>
    turn.paragraphs.flatMap((words, j) =>
      words.length === 0
        ? []
        : [
            {
              id: paragraphSegmentId(turn, i, j),
              speaker: speakerTitle(document, turn),
              speakerNumber: turn.speaker_number,
              start: words[0]!.start,
              end: words.at(-1)!.end,
              text: joinWords(words),
            },
          ],
    ),
  );
}
