import { z } from "zod";
import type { EngineWord, SpeechRequest, VocabularyEntry } from "./types";

// What the Speechmatics Batch API v2 is sent and sends back (PROTOCOLS.md §1): the job's configuration with
// the vocabulary, the schemas of its job and json-v2 answers, and json-v2 results read as engine words.

/** Speechmatics' limit on additional_vocab entries. */
const MAX_VOCABULARY = 1_000;

export const createdSchema = z.object({ id: z.string().min(1) });

export const jobSchema = z.object({
  job: z.object({
    status: z.string(),
    duration: z.number().nonnegative().optional(),
    errors: z.array(z.object({ message: z.string() }).passthrough()).optional(),
  }),
});
export type JobDetails = z.infer<typeof jobSchema>["job"];

const alternativeSchema = z.object({
  content: z.string(),
  confidence: z.number(),
  speaker: z.string().optional(),
});
/** word and punctuation results; other types (entity, anything newer) are ignored unchecked. */
const tokenSchema = z.object({
  type: z.enum(["word", "punctuation"]),
  start_time: z.number(),
  end_time: z.number(),
  is_eos: z.boolean().optional(),
  attaches_to: z.enum(["previous", "next", "both", "none"]).optional(),
  alternatives: z.array(alternativeSchema).min(1),
});
type Token = z.infer<typeof tokenSchema>;

export const transcriptSchema = z.object({
  format: z.string(),
  job: z.object({ duration: z.number().nonnegative().optional() }).passthrough(),
  metadata: z
    .object({ transcription_config: z.object({ language: z.string().optional() }).passthrough().optional() })
    .passthrough(),
  results: z.array(
    z.union([tokenSchema, z.object({ type: z.string().refine((t) => t !== "word" && t !== "punctuation") })]),
  ),
});
export type Transcript = z.infer<typeof transcriptSchema>;

/** Speechmatics' additional_vocab: non-empty entries only, at most 1000, sounds_like only when given. */
export function speechmaticsVocabulary(entries: VocabularyEntry[]): VocabularyEntry[] {
  const vocabulary: VocabularyEntry[] = [];
  for (const entry of entries) {
    const content = entry.content.trim();
    if (!content) continue;
    const soundsLike = (entry.sounds_like ?? []).map((s) => s.trim()).filter(Boolean);
    vocabulary.push(soundsLike.length > 0 ? { content, sounds_like: soundsLike } : { content });
    if (vocabulary.length === MAX_VOCABULARY) break;
  }
  return vocabulary;
}

export function jobConfig(request: SpeechRequest) {
  const vocabulary = speechmaticsVocabulary(request.vocabulary);
  return {
    type: "transcription",
    transcription_config: {
      language: request.language,
      operating_point: "enhanced",
      diarization: "speaker",
      ...(vocabulary.length > 0 ? { additional_vocab: vocabulary } : {}),
    },
  };
}

function clamp01(value: number) {
  return Math.min(1, Math.max(0, value));
}

function speakerOf(token: Token): string | null {
  const speaker = token.alternatives[0].speaker;
  return speaker && speaker !== "UU" ? speaker : null;
}

/**
 * json-v2 results as engine words. Punctuation attached to the word before it ("previous", "both", or no
 * attaches_to) is a punctuation token; an opening mark ("next", such as „) is glued to the front of the
 * following word, since EngineWord cannot attach forwards; a free-standing mark ("none") stays a token of
 * its own. Entities (we never set enable_entities) and unknown types are skipped, as the spec asks.
 */
export function speechmaticsWords(results: Transcript["results"]): EngineWord[] {
  const words: EngineWord[] = [];
  // Opening marks waiting for their word.
  let opening = "";
  let openingStart = 0;
  for (const result of results) {
    const parsed = tokenSchema.safeParse(result);
    if (!parsed.success) continue;
    const token = parsed.data;
    const alternative = token.alternatives[0];
    const word: EngineWord = {
      text: alternative.content,
      start: token.start_time,
      end: token.end_time,
      confidence: clamp01(alternative.confidence),
      speaker: speakerOf(token),
    };
    const attaches = token.type === "word" ? "word" : (token.attaches_to ?? "previous");
    if (attaches === "next") {
      if (!opening) openingStart = word.start;
      opening += word.text;
      continue;
    }
    if (opening && attaches === "word") {
      word.text = opening + word.text;
      word.start = Math.min(openingStart, word.start);
    } else if (opening) {
      words.push({ ...word, text: opening, start: openingStart, end: openingStart });
    }
    opening = "";
    if (attaches === "word") words.push(word);
    else if (attaches === "none") words.push(token.is_eos === true ? { ...word, endOfSentence: true } : word);
    else words.push({ ...word, punctuation: true, endOfSentence: token.is_eos === true });
  }
  if (opening) words.push({ text: opening, start: openingStart, end: openingStart, confidence: 1, speaker: null });
  return words;
}
