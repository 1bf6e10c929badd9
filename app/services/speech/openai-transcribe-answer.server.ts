import { z } from "zod";
import type { EngineResult, EngineWord, SpeechRequest } from "./types";

// Reading an OpenAI-compatible verbose_json answer into engine words, tolerant of every server's way of
// filling it (the rules are listed at the top of openai-transcribe.server.ts).

const SPEAKER = "S1";
const UNKNOWN_CONFIDENCE = 0.5;

const PUNCTUATION_RUN = /[.,?!;:]+$/u;
const SENTENCE_END = /[.?!]/u;

/** Seconds as a number, or as a numeric string (vLLM types `duration` as a string). */
const seconds = z
  .union([z.number(), z.string().trim().min(1)])
  .transform(Number)
  .pipe(z.number().finite());

const wordSchema = z.object({
  word: z.string(),
  start: seconds,
  end: seconds,
  probability: z.number().finite().nullish(),
});

const segmentSchema = z.object({
  start: seconds,
  end: seconds,
  text: z.string(),
  avg_logprob: z.number().finite().nullish(),
});

export const answerSchema = z
  .object({
    text: z.string().nullish(),
    language: z.string().nullish(),
    duration: seconds.nullish(),
    segments: z.array(segmentSchema).nullish(),
    words: z.array(wordSchema).nullish(),
  })
  .refine((a) => typeof a.text === "string" || a.segments != null || a.words != null, {
    message: "neither text, segments nor words",
  });

type Answer = z.infer<typeof answerSchema>;
type Segment = z.infer<typeof segmentSchema>;

const LANGUAGES: Record<string, "de" | "en"> = {
  de: "de",
  deu: "de",
  ger: "de",
  german: "de",
  deutsch: "de",
  en: "en",
  eng: "en",
  english: "en",
};

function clamp01(value: number) {
  return Math.min(1, Math.max(0, value));
}

function segmentConfidence(segment: Segment | undefined): number {
  return segment?.avg_logprob == null ? UNKNOWN_CONFIDENCE : clamp01(Math.exp(segment.avg_logprob));
}

/** A recognised token, its trailing punctuation split off into tokens of their own. */
function tokens(text: string, start: number, end: number, confidence: number): EngineWord[] {
  const from = Math.max(0, start);
  const to = Math.max(from, end);
  const run = PUNCTUATION_RUN.exec(text)?.[0] ?? "";
  const word = text.slice(0, text.length - run.length);
  const out: EngineWord[] = [];
  if (word) out.push({ text: word, start: from, end: to, confidence, speaker: SPEAKER });
  if (run) {
    out.push({
      text: run,
      start: to,
      end: to,
      confidence,
      speaker: SPEAKER,
      punctuation: true,
      ...(SENTENCE_END.test(run) ? { endOfSentence: true } : {}),
    });
  }
  return out;
}

function bare(text: string) {
  return text.toLocaleLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * OpenAI's `words` are bare ("Tag" where the text has "Tag."). Walks the punctuated text alongside the words
 * and gives each bare word the punctuation its counterpart in the text has. Words the text does not line
 * up with (a few tokens of look-ahead re-synchronise) stay as they are.
 */
function punctuate(words: string[], text: string): string[] {
  const parts = text.split(/\s+/).filter(Boolean);
  const LOOK_AHEAD = 4;
  let next = 0;
  return words.map((word) => {
    const key = bare(word);
    if (!key) return word;
    for (let at = next; at < Math.min(parts.length, next + LOOK_AHEAD); at++) {
      if (bare(parts[at]) !== key) continue;
      next = at + 1;
      const run = PUNCTUATION_RUN.exec(parts[at])?.[0];
      return run && !PUNCTUATION_RUN.test(word) ? word + run : word;
    }
    return word;
  });
}

function fromWords(answer: Answer, words: z.infer<typeof wordSchema>[]): EngineWord[] {
  const segments = [...(answer.segments ?? [])].sort((a, b) => a.start - b.start);
  const texts = punctuate(
    words.map((w) => w.word.trim()),
    answer.text ?? segments.map((s) => s.text).join(" "),
  );
  const out: EngineWord[] = [];
  let index = 0;
  words.forEach((word, i) => {
    // The segment a word belongs to: the last one starting at or before the word's middle.
    const middle = (word.start + word.end) / 2;
    while (index + 1 < segments.length && middle >= segments[index + 1].start) index++;
    const confidence = word.probability != null ? clamp01(word.probability) : segmentConfidence(segments[index]);
    if (texts[i]) out.push(...tokens(texts[i], word.start, word.end, confidence));
  });
  return out;
}

/** Words spread evenly over a span: all that is known when a server gives text without word times. */
function spread(text: string, start: number, end: number, confidence: number): EngineWord[] {
  const parts = text.split(/\s+/).filter(Boolean);
  const step = Math.max(0, end - start) / Math.max(parts.length, 1);
  return parts.flatMap((part, i) => tokens(part, start + i * step, start + (i + 1) * step, confidence));
}

export function toResult(answer: Answer, request: SpeechRequest): EngineResult {
  const duration = answer.duration != null && answer.duration > 0 ? answer.duration : request.durationSeconds;
  const segments = answer.segments ?? [];
  let words: EngineWord[];
  if (answer.words?.length) {
    words = fromWords(answer, answer.words);
  } else if (segments.some((s) => s.text.trim())) {
    // No word timestamps (a server that ignores timestamp_granularities[]=word): each segment's words share
    // its time evenly, with the segment's confidence.
    words = segments.flatMap((s) => spread(s.text, s.start, s.end, segmentConfidence(s)));
  } else if (answer.text?.trim()) {
    // Text without any timing (Ollama prompts a chat model and answers only {"text"}): the words are spread
    // over the whole recording so the transcript keeps its order, with an unknown (0.5) confidence.
    words = spread(answer.text, 0, duration, UNKNOWN_CONFIDENCE);
  } else {
    words = [];
  }
  const language = LANGUAGES[answer.language?.trim().toLowerCase() ?? ""] ?? request.language;
  return { engine: "openai", language, audioSeconds: duration, words };
}
