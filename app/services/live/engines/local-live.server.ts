import { LIVE_SAMPLE_RATE, MODELS_LOADING, TRANSCRIBE_LATER } from "~/live/protocol";
import {
  createVad,
  localEngineHealth,
  PAD_SAMPLES,
  VAD_CONFIG,
  VAD_SLICE_SAMPLES,
  type LocalEngineOptions,
  type LocalSpeechConfig,
  type WhisperWorker,
} from "~/services/speech/local-engine.server";
import { loadableModelProblems, modelsError } from "~/services/speech/local-models.server";
import { loadSherpaOnnx, probeModels, type SherpaVad } from "~/services/speech/local-native.server";
import { recogniserFor } from "~/services/speech/local-recogniser.server";
import { SPEECH_ROLES, waitingForModels } from "~/services/model-store/downloads.server";
import type { EngineHealth } from "~/services/speech/types";
import { whisperPrompt } from "~/services/speech/vocabulary.server";

import {
  LiveEngineError,
  type LiveEngine,
  type LiveEngineMessage,
  type LiveEngineRun,
  type LiveRunOptions,
} from "../engine-types";
import { transcriptMessage } from "./live-results";

// The embedded live engine (issue 7, ADR 0011's pipeline, streaming): nothing leaves the machine.
//
//   PCM buffers ──▶ Silero VAD (sherpa-onnx, one per run, fed as audio arrives) ──closed speech segment──▶
//   whisper.cpp (the process's shared whisper worker) ──words──▶ AddTranscript (Speechmatics realtime shape)
//
// - Segments: the VAD closes a segment after 0.5 s of silence (or cuts one at 20 s of speech), so a final
//   follows the end of speech by that half second plus whisper.cpp's time for the segment. Each segment is
//   recognised with 0.2 s of audio either side, as the batch engine pads its stretches, but never reaching
//   back into the previous segment's audio: finals never cover the same time twice.
// - Order: one segment at a time per run, finals in the order spoken. The whisper worker is shared with the
//   batch engine (one model in memory); live segments go before queued batch windows, and an open run keeps
//   the model loaded.
// - addAudio never blocks: buffers are queued and fed to the VAD on later turns of the event loop, at most
//   4 s of audio per turn (a resumed HTTP upload may bring many buffers at once). The VAD gets exactly one
//   512-sample window per call (sherpa-onnx misplaces speech starts when handed more).
// - Memory per run: the last 30 s of audio (what a segment of at most 20 s plus padding may need), about
//   1.9 MB, plus the segments waiting for whisper.
// - Partials: none, for dictation too. whisper.cpp has no streaming mode: a partial would be one more full
//   pass (a 30-s encoder pass whatever the length; with ggml-small seconds of CPU on this class of machine)
//   over a growing segment, once a second, on the same lane the finals need — it would delay every final by
//   more than a partial saves. The client shows the finals as they come.
// - Times are seconds from the start of this run (the runner shifts them onto the session's time line).

const RATE = LIVE_SAMPLE_RATE;
const VAD_WINDOW = VAD_CONFIG.windowSize;
/** Audio kept for padding: a segment the VAD closes starts at most about 20.5 s before the audio fed. */
const HISTORY_SAMPLES = (VAD_CONFIG.maxSpeechDuration + 10) * RATE;

export type LocalLiveOptions = LocalEngineOptions & {
  /** Recognises one segment. Default: the process's whisper worker; tests and the lag bench pass their own. */
  recognise?: WhisperWorker["recognise"];
};

type Recognise = WhisperWorker["recognise"];

export function createLocalLiveEngine(config: LocalSpeechConfig, options: LocalLiveOptions = {}): LiveEngine {
  return {
    name: "local",

    async start(run) {
      // The models are still downloading (issue 21): a recording is kept and transcribed once they are here; a
      // dictation, whose text is wanted now, is refused with the percentage.
      const coming = options.recognise ? undefined : waitingForModels(SPEECH_ROLES);
      if (coming && run.kind === "dictation") {
        throw new LiveEngineError(MODELS_LOADING, `The speech models are still downloading (${coming.percent} %)`, {
          transient: true,
        });
      }
      if (coming) return recordOnly(run, coming.percent);
      const prepared = await prepare(config, options);
      return openRun(run, prepared);
    },

    async check(): Promise<EngineHealth> {
      try {
        return await localEngineHealth(config);
      } catch (error) {
        return { status: "error", detail: (error as Error).message };
      }
    },
  };
}

type Prepared = { vad: SherpaVad; recognise: Recognise; release: () => void };

/**
 * A run that recognises nothing: it says so once (a Warning of type TRANSCRIBE_LATER, which the session keeps),
 * takes the audio the runner stores anyway, and ends when asked. Saving such a session queues its recording.
 */
function recordOnly(options: LiveRunOptions, percent: number): LiveEngineRun {
  let open = true;
  const finish = (last?: LiveEngineMessage) => {
    if (!open) return;
    open = false;
    if (last) options.emit(last);
    options.onClose?.({});
  };
  setImmediate(() => {
    if (!open) return;
    const reason = `The speech models are still downloading (${percent} %): the recording is kept and transcribed once they are ready`;
    options.emit({ message: "Warning", type: TRANSCRIBE_LATER, reason });
  });
  return {
    addAudio() {},
    end: () => setImmediate(() => finish({ message: "EndOfTranscript" })),
    close: () => finish(),
  };
}

/** Everything that can fail before audio flows, so start() rejects with the operator's advice. */
async function prepare(config: LocalSpeechConfig, options: LocalLiveOptions): Promise<Prepared> {
  try {
    const problems = await loadableModelProblems(config);
    if (problems.length) throw modelsError(problems);
    const sherpa = loadSherpaOnnx().module;
    const failed = await probeModels("vad", [config.vadModel]);
    if (failed) throw modelsError([`VAD model ${config.vadModel} cannot be loaded: ${failed}`]);
    const vad = createVad(sherpa, config.vadModel);
    if (options.recognise) return { vad, recognise: options.recognise, release: () => {} };

    const { worker, ensureNative } = recogniserFor(config, options);
    ensureNative();
    const release = worker.hold();
    try {
      await worker.load(); // the first segment should not wait for a model load of several seconds
    } catch (error) {
      release();
      throw error;
    }
    return { vad, recognise: (pcm, request) => worker.recognise(pcm, { ...request, urgent: true }), release };
  } catch (error) {
    throw new LiveEngineError("engine_unavailable", (error as Error).message ?? String(error), { cause: error });
  }
}

/** The last `keep` samples of a run, addressed by sample number from the run's start. */
class SampleHistory {
  private chunks: Array<{ start: number; samples: Float32Array }> = [];
  end = 0;

  constructor(private readonly keep: number) {}

  append(samples: Float32Array) {
    this.chunks.push({ start: this.end, samples });
    this.end += samples.length;
    while (this.chunks.length > 1 && this.chunks[0].start + this.chunks[0].samples.length <= this.end - this.keep)
      this.chunks.shift();
  }

  /** Samples from..to (what is no longer kept reads as silence). */
  slice(from: number, to: number): Float32Array {
    const out = new Float32Array(Math.max(0, to - from));
    for (const { start, samples } of this.chunks) {
      const a = Math.max(from, start);
      const b = Math.min(to, start + samples.length);
      if (a < b) out.set(samples.subarray(a - start, b - start), a - from);
    }
    return out;
  }

  clear() {
    this.chunks = [];
  }
}

function openRun(options: LiveRunOptions, { vad, recognise, release }: Prepared) {
  const prompt = whisperPrompt(options.vocabulary);
  const history = new SampleHistory(HISTORY_SAMPLES);
  let incoming: Float32Array[] = [];
  let oddByte: Buffer | undefined; // a sample split between two buffers
  let carry = new Float32Array(0); // less than one VAD window, waiting for more
  let windowEnd = 0; // where the last segment's audio ended: the next one starts no earlier
  let segments: Array<{ start: number; pcm: Float32Array }> = [];
  let state: "open" | "ending" | "done" = "open";
  const done = () => state === "done"; // a function: TypeScript would keep its narrowing across an await
  let feedScheduled = false;
  let flushed = false;
  let recognising = false;

  function finish(last: LiveEngineMessage | undefined, info: { reason?: string }) {
    if (state === "done") return;
    state = "done";
    incoming = [];
    segments = [];
    history.clear();
    release();
    if (last) options.emit(last);
    options.onClose?.(info);
  }

  function fail(error: unknown) {
    const reason = `The local speech engine failed: ${(error as Error)?.message ?? String(error)}`;
    finish({ message: "Error", type: "job_error", reason }, { reason });
  }

  function feedVad(samples: Float32Array) {
    history.append(samples);
    let input = samples;
    if (carry.length) {
      input = new Float32Array(carry.length + samples.length);
      input.set(carry);
      input.set(samples, carry.length);
    }
    let at = 0;
    for (; at + VAD_WINDOW <= input.length; at += VAD_WINDOW) vad.acceptWaveform(input.subarray(at, at + VAD_WINDOW));
    carry = input.slice(at);
  }

  function takeSegments() {
    while (!vad.isEmpty()) {
      const found = vad.front(false);
      vad.pop();
      const from = Math.max(0, found.start - PAD_SAMPLES, windowEnd);
      const to = Math.min(found.start + found.samples.length + PAD_SAMPLES, history.end);
      if (to <= from) continue;
      windowEnd = to;
      segments.push({ start: from, pcm: history.slice(from, to) });
    }
  }

  function scheduleFeed() {
    if (feedScheduled || state === "done") return;
    feedScheduled = true;
    setImmediate(feedSlice);
  }

  function feedSlice() {
    feedScheduled = false;
    if (state === "done") return;
    try {
      for (let budget = VAD_SLICE_SAMPLES; incoming.length && budget > 0;) {
        let chunk = incoming.shift()!;
        if (chunk.length > budget) {
          incoming.unshift(chunk.subarray(budget));
          chunk = chunk.subarray(0, budget);
        }
        feedVad(chunk);
        budget -= chunk.length;
      }
      if (state === "ending" && !incoming.length && !flushed) {
        if (carry.length) vad.acceptWaveform(carry);
        vad.flush();
        flushed = true;
      }
      takeSegments();
    } catch (error) {
      return fail(error);
    }
    if (incoming.length) scheduleFeed();
    void recogniseSegments();
  }

  async function recogniseSegments() {
    if (recognising) return;
    recognising = true;
    try {
      for (let segment = segments.shift(); segment && !done(); segment = segments.shift()) {
        const pieces = [{ windowStart: 0, fileStart: segment.start / RATE, duration: segment.pcm.length / RATE }];
        const words = await recognise(segment.pcm, { language: options.language, prompt, pieces });
        if (done()) return; // closed while whisper ran: nothing more is said
        const message = transcriptMessage(words);
        if (message) options.emit(message);
      }
    } catch (error) {
      return fail(error);
    } finally {
      recognising = false;
    }
    if (state === "ending" && flushed && !segments.length) finish({ message: "EndOfTranscript" }, {});
  }

  return {
    addAudio(pcm: Buffer) {
      if (state !== "open") return;
      let bytes = oddByte ? Buffer.concat([oddByte, pcm]) : pcm;
      oddByte = bytes.length % 2 ? Buffer.from(bytes.subarray(bytes.length - 1)) : undefined;
      if (oddByte) bytes = bytes.subarray(0, bytes.length - 1);
      if (bytes.length === 0) return;
      const samples = new Float32Array(bytes.length / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(2 * i) / 32768;
      incoming.push(samples);
      scheduleFeed();
    },

    end() {
      if (state !== "open") return;
      state = "ending";
      scheduleFeed();
    },

    close() {
      finish(undefined, { reason: "closed" });
    },
  };
}
