// The "recognition" of the fake Speechmatics realtime server (fake-speechmatics-rt.ts): deterministic from the
// audio, so end-to-end tests can speak real audio and know what comes back. The PCM is cut into 20 ms frames;
// a frame whose RMS is over `voiceThreshold` is voiced, and a voiced stretch ends after 350 ms of silence.
// Stretch k says the k-th line of the script (cycling). Its words take nominal durations from the stretch's
// start while it is open; whatever is left when it closes is spread evenly up to its last voiced frame.
// Finals follow PROTOCOLS.md §2 item 4: a word is final once the audio has gone `min(max_delay, 1 s)` past
// its end (the last word of a stretch waits for the stretch to close), every Final is followed by a Partial
// of the unfinalised tail when partials are on, and no word is ever final twice. Everything is decided frame
// by frame in audio time, so how the client cuts its buffers changes nothing but how partials are grouped.

export type ScriptLine = { speaker?: string; text: string };

export type RtAlternative = { content: string; confidence: number; language: string; speaker: string };
export type RtResult = {
  type: "word" | "punctuation";
  start_time: number;
  end_time: number;
  is_eos?: boolean;
  attaches_to?: "previous";
  alternatives: [RtAlternative];
};
export type RtTranscript = {
  message: "AddTranscript" | "AddPartialTranscript";
  format: "2.9";
  metadata: { start_time: number; end_time: number; transcript: string };
  results: RtResult[];
};

/** A short German consultation: a doctor (S1) and a patient (S2). */
export const DEFAULT_RT_SCRIPT: ScriptLine[] = [
  { speaker: "S1", text: "Guten Tag, was führt Sie heute zu mir?" },
  { speaker: "S2", text: "Ich habe seit drei Tagen Kopfschmerzen und leichtes Fieber." },
  { speaker: "S1", text: "Haben Sie schon Medikamente genommen?" },
  { speaker: "S2", text: "Nur Ibuprofen, vierhundert Milligramm, zweimal täglich." },
  { speaker: "S1", text: "Wir messen jetzt Blutdruck und Temperatur." },
  { speaker: "S2", text: "In Ordnung, vielen Dank." },
];

/** Cycled word by word, so low (< 0.5), medium and high (> 0.85) confidence all occur. */
const CONFIDENCES = [0.97, 0.91, 0.62, 0.88, 0.42, 0.99, 0.74, 0.93, 0.55, 0.86];
const MARKS = new Set([".", ",", "?", "!", ";", ":"]);
const END_OF_SENTENCE = new Set([".", "?", "!"]);
const FRAME_SECONDS = 0.02;
const SILENCE_TO_CLOSE = 0.35;

type Word = { content: string; marks: string[]; speaker: string; confidence: number; start: number; end: number };
type Stretch = {
  start: number;
  lastVoiced: number;
  closed: boolean;
  words: Word[];
  /** Cumulative nominal durations: word i starts at start + offsets[i] while the stretch is open. */
  offsets: number[];
  /** Words already final. */
  done: number;
  /** RMS of its loudest 20 ms frame. */
  loudest: number;
};

function round(value: number) {
  return Math.round(value * 100) / 100;
}

/** metadata.transcript: words joined by the word delimiter (a space), marks attached to the word before. */
export function joinTranscript(results: RtResult[]): string {
  let text = "";
  for (const result of results) {
    const glue = text === "" || result.attaches_to === "previous";
    text += (glue ? "" : " ") + result.alternatives[0].content;
  }
  return text;
}

function tokenise(line: ScriptLine): Array<Pick<Word, "content" | "marks" | "speaker">> {
  const words: Array<Pick<Word, "content" | "marks" | "speaker">> = [];
  for (const token of line.text.split(/\s+/).filter(Boolean)) {
    const chars = [...token];
    const marks: string[] = [];
    while (chars.length > 1 && MARKS.has(chars[chars.length - 1])) marks.unshift(chars.pop()!);
    words.push({ content: chars.join(""), marks, speaker: line.speaker ?? "S1" });
  }
  return words;
}

export type RecognizerConfig = {
  encoding: "pcm_s16le" | "pcm_f32le";
  sampleRate: number;
  maxDelay: number;
  partials: boolean;
  /** false → every word's speaker is "UU" (diarization "none"). */
  diarization: boolean;
  language: string;
  script: ScriptLine[];
  /** RMS (full scale = 1) over which a 20 ms frame counts as voiced. */
  voiceThreshold?: number;
  /**
   * Picks a stretch's line by its loudest frame's RMS, when it closes, instead of by its order: with one-word
   * lines, what is said then depends on the audio alone, so another run hearing it again says it again.
   */
  lineOf?: (loudness: number) => ScriptLine;
};

export type Recognizer = {
  /** Consumes audio bytes (any cut, samples may straddle calls); returns the transcripts now due, in order. */
  push(bytes: Buffer): RtTranscript[];
  /** End of stream: closes the open stretch and finalises every word left. */
  finish(): RtTranscript[];
  /** Seconds of audio consumed. */
  readonly seconds: number;
};

export function createRecognizer(config: RecognizerConfig): Recognizer {
  const bytesPerSample = config.encoding === "pcm_f32le" ? 4 : 2;
  const frameSamples = Math.max(1, Math.round(config.sampleRate * FRAME_SECONDS));
  const finalDelay = Math.max(SILENCE_TO_CLOSE, Math.min(config.maxDelay, 1));
  const threshold = config.voiceThreshold ?? 0.02;
  const script = config.script.length > 0 ? config.script : DEFAULT_RT_SCRIPT;
  const stretches: Stretch[] = [];
  let remainder = Buffer.alloc(0);
  let samples = 0;
  let frameEnergy = 0;
  let frameCount = 0;
  let wordCounter = 0;
  let lastPartial = "[]";

  const now = () => samples / config.sampleRate;

  const wordsOf = (line: ScriptLine): Word[] =>
    tokenise(line).map((w) => ({
      ...w,
      speaker: config.diarization ? w.speaker : "UU",
      confidence: CONFIDENCES[wordCounter++ % CONFIDENCES.length],
      start: 0,
      end: 0,
    }));

  function open(start: number, loudest: number): Stretch {
    const words = wordsOf(script[stretches.length % script.length]);
    const offsets = [0];
    for (const word of words)
      offsets.push(offsets[offsets.length - 1] + Math.min(0.9, 0.25 + 0.04 * word.content.length));
    const stretch = { start, lastVoiced: now(), closed: false, words, offsets, done: 0, loudest };
    stretches.push(stretch);
    return stretch;
  }

  function close(stretch: Stretch) {
    stretch.closed = true;
    if (config.lineOf && stretch.done === 0) stretch.words = wordsOf(config.lineOf(stretch.loudest));
    const from = stretch.done > 0 ? stretch.words[stretch.done - 1].end : stretch.start;
    const left = stretch.words.length - stretch.done;
    const step = (stretch.lastVoiced - from) / Math.max(1, left);
    stretch.words.slice(stretch.done).forEach((word, i) => {
      word.start = from + i * step;
      word.end = from + (i + 1) * step;
    });
  }

  function nominal(stretch: Stretch, i: number) {
    return { start: stretch.start + stretch.offsets[i], end: stretch.start + stretch.offsets[i + 1] };
  }

  function results(words: Word[]): RtResult[] {
    const out: RtResult[] = [];
    for (const word of words) {
      const alt = { confidence: word.confidence, language: config.language, speaker: word.speaker };
      const [start, end] = [round(word.start), round(word.end)];
      out.push({ type: "word", start_time: start, end_time: end, alternatives: [{ content: word.content, ...alt }] });
      for (const mark of word.marks) {
        out.push({
          type: "punctuation",
          start_time: end,
          end_time: end,
          is_eos: END_OF_SENTENCE.has(mark),
          attaches_to: "previous",
          alternatives: [{ content: mark, ...alt, confidence: 1 }],
        });
      }
    }
    return out;
  }

  function transcript(message: RtTranscript["message"], words: Word[]): RtTranscript {
    const list = results(words);
    const start_time = list.length > 0 ? list[0].start_time : round(now());
    const end_time = list.length > 0 ? list[list.length - 1].end_time : round(now());
    return {
      message,
      format: "2.9",
      metadata: { start_time, end_time, transcript: joinTranscript(list) },
      results: list,
    };
  }

  /** Words heard but not final, with their current times (an open stretch's by their nominal slots). */
  function tail(): Word[] {
    const words: Word[] = [];
    const t = now();
    for (const stretch of stretches) {
      for (let i = stretch.done; i < stretch.words.length; i++) {
        if (stretch.closed) {
          words.push(stretch.words[i]);
          continue;
        }
        const slot = nominal(stretch, i);
        if (slot.start >= t && i > 0) break;
        words.push({ ...stretch.words[i], start: slot.start, end: Math.max(slot.start, Math.min(slot.end, t)) });
      }
    }
    return words;
  }

  function partial(out: RtTranscript[], force: boolean) {
    if (!config.partials) return;
    const message = transcript("AddPartialTranscript", tail());
    // A new partial when the words changed, not each time the open word grows by a frame.
    const key = JSON.stringify(message.results.map((r) => r.alternatives[0].content));
    if (!force && key === lastPartial) return;
    lastPartial = key;
    out.push(message);
  }

  function finalise(out: RtTranscript[], everything: boolean) {
    const t = now();
    const final: Word[] = [];
    for (const stretch of stretches) {
      if (stretch.closed && (everything || t >= stretch.lastVoiced + finalDelay)) {
        final.push(...stretch.words.slice(stretch.done));
        stretch.done = stretch.words.length;
        continue;
      }
      // An open stretch finalises its words as their nominal slots age, all but the last (it ends with the
      // stretch); a closed one waiting for its delay holds back every later stretch so finals stay in order.
      while (!stretch.closed && stretch.done < stretch.words.length - 1) {
        const slot = nominal(stretch, stretch.done);
        if (t < slot.end + finalDelay) break;
        Object.assign(stretch.words[stretch.done], slot);
        final.push(stretch.words[stretch.done++]);
      }
      break;
    }
    if (final.length === 0) return;
    out.push(transcript("AddTranscript", final));
    partial(out, true);
  }

  function frame(out: RtTranscript[], rms: number) {
    const t = now();
    const current = stretches.at(-1);
    const openStretch = current && !current.closed ? current : undefined;
    if (rms >= threshold) {
      if (!openStretch) open(t - FRAME_SECONDS, rms);
      else Object.assign(openStretch, { lastVoiced: t, loudest: Math.max(openStretch.loudest, rms) });
    } else if (openStretch && t - openStretch.lastVoiced >= SILENCE_TO_CLOSE) {
      close(openStretch);
    }
    finalise(out, false);
  }

  function sample(bytes: Buffer, offset: number) {
    return bytesPerSample === 4
      ? Math.max(-1, Math.min(1, bytes.readFloatLE(offset)))
      : bytes.readInt16LE(offset) / 32768;
  }

  return {
    push(chunk) {
      const out: RtTranscript[] = [];
      const bytes = remainder.length > 0 ? Buffer.concat([remainder, chunk]) : chunk;
      const whole = bytes.length - (bytes.length % bytesPerSample);
      for (let offset = 0; offset < whole; offset += bytesPerSample) {
        const value = sample(bytes, offset);
        frameEnergy += value * value;
        frameCount++;
        samples++;
        if (frameCount === frameSamples) {
          frame(out, Math.sqrt(frameEnergy / frameCount));
          frameEnergy = 0;
          frameCount = 0;
        }
      }
      remainder = Buffer.from(bytes.subarray(whole));
      partial(out, false);
      return out;
    },
    finish() {
      const out: RtTranscript[] = [];
      const current = stretches.at(-1);
      if (current && !current.closed) close(current);
      finalise(out, true);
      return out;
    },
    get seconds() {
      return now();
    },
  };
}
