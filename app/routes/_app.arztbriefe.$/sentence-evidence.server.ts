import type { LetterEvidence } from "~/services/letters/letter-evidence.server";
import type { SentenceEvidence } from "./types";

// The structured editor's evidence at the caret (issue 24): with JavaScript, placing the caret in a sentence shows
// where the transcript says it and plays the audio from that second (app/pe/letter-evidence.js). The page carries
// it as one compact attribute — each cited segment once, sentences by their stored wording — so the script only
// looks things up and writes text; without JavaScript the check (`?check=1`) shows the same with links.

export function sentenceEvidence(
  evidence: LetterEvidence,
  transcriptPath: string,
  audioUrl: string | null,
): SentenceEvidence {
  const segments: SentenceEvidence["segments"] = {};
  const sections = evidence.sections.map((section) =>
    section.sentences.map((sentence) => {
      // "Keine Informationen gefunden" and other non-statements are listed too (with nothing to show), so that the
      // script tells them from a sentence the doctor rewrote.
      for (const source of sentence.sources)
        segments[source.id] ??= [source.speaker, Math.max(0, Math.floor(source.start)), source.text];
      return { text: sentence.text, status: sentence.status, sources: sentence.sources.map((s) => s.id) };
    }),
  );
  return { transcriptPath, audioUrl, segments, sections };
}
