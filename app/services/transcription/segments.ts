import { joinWords, speakerLabel, type TranscriptDocument } from "~/services/speech/transcript-format";

// A transcript's citable pieces (issue 24): each paragraph of each speaker turn, with a stable id that the
// letter's evidence names and the transcript viewer carries as an anchor, so a sentence of the letter can link to
// "where it was said" with or without JavaScript. The id is the paragraph's position (turn, paragraph), which a
// transcript keeps for its life: engines write it once, and a correction changes words, not the turns' shape.

export type TranscriptSegment = {
  /** "t<turn>p<paragraph>", both counted from 0. */
  id: string;
  /** "Sprecher 1" / "Speaker 1", in the transcript's language. */
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

/** The fragment a link to one segment of the transcript view ends with. */
export function segmentAnchor(id: string) {
  return `seg-${id}`;
}

export function transcriptSegments(document: Pick<TranscriptDocument, "turns" | "language_code">): TranscriptSegment[] {
  return document.turns.flatMap((turn, i) =>
    turn.paragraphs.flatMap((words, j) =>
      words.length === 0
        ? []
        : [
            {
              id: segmentId(i, j),
              speaker: speakerLabel(document.language_code, turn.speaker_number),
              speakerNumber: turn.speaker_number,
              start: words[0]!.start,
              end: words.at(-1)!.end,
              text: joinWords(words),
            },
          ],
    ),
  );
}
