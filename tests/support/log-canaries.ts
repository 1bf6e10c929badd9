import { WORDS } from "./access-matrix-fixture";
import { CHAT_ANSWER_PREFIX, CHAT_FAILURE_MARKER, CHAT_SLOW_MARKER } from "./fake-llm-chat-names";
import { NOT_CLINICAL_MARKER, REFINED_SUFFIX } from "./fake-llm-letters";
import { TWO_SPEAKER_TURNS } from "./fake-speechmatics";
import { DEFAULT_RT_SCRIPT } from "./fake-speechmatics-rt-recognition";
import { livePayload } from "./live-save";

// What scripts/log-hygiene.mjs looks for as "content": strings that only users' data contains in the suite —
// what the fixtures say, type, name and write. Taken from the fixtures themselves, so a changed fixture changes
// the check with it. The scanner bundles this module with esbuild (scripts/fake-speech-bundle.mjs), which keeps
// only what these exports need: so only data and pure functions here, nothing that starts anything.

const live = livePayload();

/** The transcripts the fakes return: the batch fixture and the realtime script, turn by turn. */
const SPOKEN = [...TWO_SPEAKER_TURNS.map((turn) => turn.text), ...DEFAULT_RT_SCRIPT.map((line) => line.text)];

/** A live save's transcript comes as separate words. */
const LIVE_WORDS = (live.transcript_data.results as Array<{ type: string; alternatives: Array<{ content: string }> }>)
  .filter((result) => result.type === "word")
  .map((result) => result.alternatives[0].content);

/**
 * Words of the transcripts that the app's own texts (templates, vocabulary, help) also contain: logging a
 * template's heading is not logging a consultation. scripts/log-hygiene.test.ts keeps this in step.
 */
export const APP_VOCABULARY = new Set(["Medikamente", "Blutdruck"]);

/** Long enough to tell on their own: a transcript dumped as JSON shows its words one by one. */
const MIN_WORD_LENGTH = 9;

/** Whole strings of users' content: names, titles, notes, questions, answers, and each spoken sentence. */
export const CONTENT_PHRASES: string[] = unique([
  ...Object.values(WORDS),
  live.display_name,
  live.additional_context.trim(),
  NOT_CLINICAL_MARKER,
  REFINED_SUFFIX.trim(),
  CHAT_ANSWER_PREFIX.trim(),
  CHAT_FAILURE_MARKER,
  CHAT_SLOW_MARKER,
  ...SPOKEN.flatMap((text) => text.split(/(?<=[.!?])\s+/)).filter((sentence) => sentence.length >= 12),
]);

/** Single words of the transcripts, matched as whole words. */
export const CONTENT_WORDS: string[] = unique(
  [...SPOKEN.flatMap((text) => text.match(/\p{L}+/gu) ?? []), ...LIVE_WORDS].filter(
    (word) => word.length >= MIN_WORD_LENGTH && !APP_VOCABULARY.has(word),
  ),
);

/**
 * The patient ids of the suite's record sources — the fake M-Files vault (P-1, P-2, …,
 * tests/support/mfiles-helpers.ts) and the local records directory (P-100): "P-" and digits.
 */
export const PATIENT_ID_PATTERN = /(?<![\w-])P-\d+(?![\w-])/;

function unique(values: string[]): string[] {
  return [...new Set(values.filter((value) => value.trim() !== ""))];
}
