import { speakerNumber, type Segment } from "./transcript";

type Msg = (key: string, values?: Record<string, string | number>) => string;

/**
 * The recording widget's running transcript. One inline element per final, so the words of a speaker's turn flow
 * as one paragraph; a new turn starts on its own line under the speaker's label (a sibling, so a segment holds
 * only what was said). Text only (textContent): what the engine heard is never markup.
 */
export function appendSegment(transcript: Element, segment: Segment, msg: Msg) {
  const previous = transcript.querySelector("[data-speaker]:last-of-type");
  if (segment.speaker && previous?.getAttribute("data-speaker") !== segment.speaker) {
    const who = document.createElement("strong");
    who.className = `block font-medium text-slate-600 ${previous ? "mt-2" : ""}`;
    who.setAttribute("data-speaker-label", "");
    const n = speakerNumber(segment.speaker);
    who.textContent = n === null ? msg("speakerUnknown") : msg("speaker", { n });
    transcript.appendChild(who);
  }
  const piece = document.createElement("span");
  piece.setAttribute("data-speaker", segment.speaker);
  piece.textContent = `${segment.text} `;
  transcript.appendChild(piece);
  transcript.scrollTop = transcript.scrollHeight;
}
