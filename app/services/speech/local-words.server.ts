import type { EngineWord } from "./types";

// whisper.cpp's segments and tokens (as smart-whisper reports them with format "detail" and token timestamps)
// turned into EngineWords. Pure functions, so the rules are tested without a model:
// - Words: a token whose text starts with white space starts a new word; tokens without it continue the word
//   ("Kopf" + "schmer" + "zen"), so "3" + "." + "5" stays "3.5". The first token of a segment starts a word.
// - Special tokens ([_BEG_], [_TT_150], <|endoftext|>, …) are dropped.
// - Punctuation: a trailing run of . , ? ! ; : … becomes a word of its own with `punctuation: true` (and
//   `endOfSentence` when it holds . ? or !), timed at the end of its word, as the other engines do. Common
//   German abbreviations ("Dr.", "z.B.", "i.v.") keep their dot and end no sentence.
// - Confidence: the LOWEST probability among the word's tokens. A long clinical term is split into several
//   tokens; one doubtful piece means the word may be wrong, and a mean would hide it behind the sure pieces.
// - Times: the first token's start and the last token's end (whisper.cpp's token timestamps, ms from the start
//   of the audio it was given), held inside the segment; without usable token times the segment's span is
//   shared out by the length of the words. Then mapped back to the recording through the window's pieces
//   (the engine concatenates speech stretches into one window; see `WindowPiece`).
// - Tokens are bytes, not characters: a token may hold half of a UTF-8 character, which reaches JavaScript as
//   U+FFFD. The segment's text is decoded whole, so such words take their spelling from it.

export type WhisperToken = {
  text: string;
  /** Probability 0..1 of the token. */
  p: number;
  /** Milliseconds from the start of the audio whisper was given; present with token_timestamps. */
  from?: number;
  to?: number;
};

export type WhisperSegment = {
  /** Milliseconds from the start of the audio whisper was given. */
  from: number;
  to: number;
  text: string;
  tokens?: WhisperToken[];
};

/** One stretch of the recording inside a recognition window, in seconds. */
export type WindowPiece = { windowStart: number; fileStart: number; duration: number };

export const DEFAULT_SPEAKER = "S1";
const UNKNOWN_CONFIDENCE = 0.5;

const SPECIAL_TOKEN = /^(\[_[^\]]*\]|<\|[^|]*\|>)$/u;
const PUNCTUATION_RUN = /[.,?!;:…]+$/u;
const PUNCTUATION_ONLY = /^[\p{P}\p{S}]+$/u;
const SENTENCE_END = /[.?!]/u;
/** Abbreviations whose dot belongs to the word (compared without the final dot, lower case). */
const ABBREVIATIONS = new Set([
  "dr",
  "prof",
  "bzw",
  "ca",
  "evtl",
  "ggf",
  "usw",
  "vgl",
  "nr",
  "inkl",
  "sog",
  "str",
  "mrs",
  "mr",
  "etc",
  "vs",
]);
/** Letter-dot chains: z.B., u.a., d.h., i.v., s.c., p.o. */
const LETTER_CHAIN = /^(\p{L}\.)+\p{L}?\.?$/u;

/** A time in the window (seconds) as a time in the recording. Between pieces it holds at a piece's end. */
export function windowToFileTime(pieces: WindowPiece[], seconds: number): number {
  if (pieces.length === 0) return seconds;
  let piece = pieces[0];
  for (const candidate of pieces) {
    if (candidate.windowStart <= seconds) piece = candidate;
    else break;
  }
  const within = Math.min(Math.max(seconds - piece.windowStart, 0), piece.duration);
  return piece.fileStart + within;
}

function isAbbreviation(text: string) {
  if (!text.endsWith(".")) return false;
  const bare = text.slice(0, -1).toLocaleLowerCase("de");
  return ABBREVIATIONS.has(bare) || (LETTER_CHAIN.test(text) && text.length <= 6);
}

type Group = { tokens: WhisperToken[]; text: string };

function groupTokens(tokens: WhisperToken[]): Group[] {
  const groups: Group[] = [];
  for (const token of tokens) {
    const last = groups[groups.length - 1];
    if (!last || /^\s/u.test(token.text)) groups.push({ tokens: [token], text: token.text });
    else {
      last.tokens.push(token);
      last.text += token.text;
    }
  }
  return groups.filter((g) => g.text.trim() !== "");
}

/** Spellings from the segment text for groups that lost a character to a split UTF-8 sequence. */
function repairSpelling(groups: Group[], segmentText: string): boolean[] {
  const repaired = groups.map(() => false);
  if (!groups.some((g) => g.text.includes("\uFFFD")) || segmentText.includes("\uFFFD")) return repaired;
  const chunks = segmentText.match(/\s*\S+/gu) ?? [];
  if (chunks.length !== groups.length) return repaired;
  groups.forEach((group, i) => {
    if (group.text.includes("\uFFFD")) {
      group.text = chunks[i];
      repaired[i] = true;
    }
  });
  return repaired;
}

function clamp01(value: number) {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : UNKNOWN_CONFIDENCE;
}

function minProbability(tokens: WhisperToken[]) {
  return tokens.length ? clamp01(Math.min(...tokens.map((t) => t.p))) : UNKNOWN_CONFIDENCE;
}

function hasTimes(token: WhisperToken) {
  return (
    typeof token.from === "number" &&
    typeof token.to === "number" &&
    Number.isFinite(token.from) &&
    Number.isFinite(token.to) &&
    token.from >= 0 &&
    token.to >= token.from
  );
}

type Span = { start: number; end: number };

/** The tokens that make up the first `cut` characters of the trimmed group text, and the rest. */
function splitTokens(group: Group, trimmedLead: number, cut: number, exact: boolean) {
  if (!exact) {
    // The text was respelled: tokens and characters no longer line up. The punctuation takes the trailing
    // tokens that are punctuation only (at least the last one); the word keeps the others.
    let split = group.tokens.length;
    while (split > 1 && PUNCTUATION_ONLY.test(group.tokens[split - 1].text.trim())) split--;
    return { word: group.tokens.slice(0, split), rest: group.tokens.slice(split) };
  }
  const word: WhisperToken[] = [];
  const rest: WhisperToken[] = [];
  let at = -trimmedLead;
  for (const token of group.tokens) {
    const start = at;
    const end = at + token.text.length;
    at = end;
    if (end <= 0) continue; // leading white space only
    if (start < cut) word.push(token);
    if (end > cut) rest.push(token);
  }
  return { word, rest };
}

/**
 * The words of whisper.cpp's segments, timed in the recording. `pieces` maps window time to recording time
 * (omitted: window time is recording time plus `offset` seconds).
 */
export function wordsFromWhisper(
  segments: WhisperSegment[],
  options: { pieces?: WindowPiece[]; offset?: number; speaker?: string | null } = {},
): EngineWord[] {
  const speaker = options.speaker === undefined ? DEFAULT_SPEAKER : options.speaker;
  const offset = options.offset ?? 0;
  const toFile = (ms: number) =>
    options.pieces?.length ? windowToFileTime(options.pieces, ms / 1000) : ms / 1000 + offset;
  const out: EngineWord[] = [];
  let lastEnd = 0;

  for (const segment of segments) {
    const segFrom = Math.max(0, segment.from);
    const segTo = Math.max(segFrom, segment.to);
    const tokens = (segment.tokens ?? []).filter((t) => !SPECIAL_TOKEN.test(t.text.trim()) && t.text !== "");
    const groups: Group[] = tokens.length
      ? groupTokens(tokens)
      : (segment.text.match(/\s*\S+/gu) ?? []).map((text) => ({ tokens: [], text }));
    if (groups.length === 0) continue;
    const repaired = repairSpelling(groups, segment.text);

    // Times in window milliseconds, per group: from tokens when every token has them, else shared out.
    const timed = tokens.length > 0 && tokens.every(hasTimes);
    const totalChars = groups.reduce((sum, g) => sum + g.text.trim().length, 0) || 1;
    let cursor = segFrom;
    const spans: Span[] = groups.map((group) => {
      if (timed && group.tokens.length) {
        const start = Math.min(Math.max(group.tokens[0].from!, segFrom), segTo);
        const end = Math.min(Math.max(group.tokens[group.tokens.length - 1].to!, start), segTo);
        return { start, end };
      }
      const share = ((segTo - segFrom) * group.text.trim().length) / totalChars;
      const span = { start: cursor, end: cursor + share };
      cursor += share;
      return span;
    });

    groups.forEach((group, index) => {
      const trimmed = group.text.trim();
      const lead = group.text.length - group.text.trimStart().length;
      // Never before the previous word's end (token times may overlap a little), never after its own end.
      const rawEnd = toFile(spans[index].end);
      const startSec = Math.max(toFile(spans[index].start), Math.min(lastEnd, rawEnd));
      const endSec = Math.max(startSec, rawEnd);

      if (PUNCTUATION_ONLY.test(trimmed)) {
        // A mark standing alone ("," "-" "..."): attached to the word before; none before → dropped.
        const previous = out[out.length - 1];
        if (!previous || !PUNCTUATION_RUN.test(trimmed)) return;
        const at = previous.end;
        out.push({
          text: trimmed,
          start: at,
          end: at,
          confidence: minProbability(group.tokens),
          speaker,
          punctuation: true,
          ...(SENTENCE_END.test(trimmed) ? { endOfSentence: true } : {}),
        });
        return;
      }

      const run = isAbbreviation(trimmed) ? "" : (PUNCTUATION_RUN.exec(trimmed)?.[0] ?? "");
      const wordText = trimmed.slice(0, trimmed.length - run.length);
      const exact = !repaired[index] && group.tokens.map((t) => t.text).join("") === group.text;
      const { word, rest } = run
        ? splitTokens(group, lead, wordText.length, exact)
        : { word: group.tokens, rest: [] as WhisperToken[] };

      let wordEnd = endSec;
      if (timed && run && word.length && rest.length && hasTimes(word[word.length - 1])) {
        // The word ends where its last letter token ends, not where the full stop does.
        const letterEnd = Math.min(Math.max(word[word.length - 1].to!, spans[index].start), spans[index].end);
        wordEnd = Math.max(startSec, toFile(letterEnd));
      }
      out.push({ text: wordText, start: startSec, end: wordEnd, confidence: minProbability(word), speaker });
      lastEnd = wordEnd;
      if (run) {
        out.push({
          text: run,
          start: wordEnd,
          end: wordEnd,
          confidence: minProbability(rest.length ? rest : word),
          speaker,
          punctuation: true,
          ...(SENTENCE_END.test(run) ? { endOfSentence: true } : {}),
        });
      }
    });
  }
  return out;
}

function normalised(text: string) {
  return text
    .toLocaleLowerCase("de")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/**
 * Without segments that only repeat the initial prompt: on unclear audio Whisper tends to "hear" its prompt,
 * here the vocabulary list. A segment of four or more words found word for word in the prompt is such an echo.
 */
export function withoutPromptEcho(segments: WhisperSegment[], prompt: string): WhisperSegment[] {
  const inPrompt = ` ${normalised(prompt)} `;
  if (!inPrompt.trim()) return segments;
  return segments.filter((segment) => {
    const text = normalised(segment.text);
    return text.split(" ").length < 4 || !inPrompt.includes(` ${text} `);
  });
}
