import {
  loadSherpaOnnx,
  probeDiarization,
  probeModels,
  type SherpaDiarizationConfig,
  type SherpaDiarizationSegment,
  type SherpaOnnx,
  type SherpaVad,
} from "./local-native.server";
import {
  readAllSamples,
  readSampleChunks,
  readSampleRanges,
  readWavInfo,
  SAMPLE_RATE,
  type SampleRange,
  type WavInfo,
} from "./local-wav.server";
import { assignSpeakers, type SpeakerTurn } from "./local-speakers.server";
import type { WindowPiece } from "./local-words.server";
import {
  diarizationEnabled,
  fileProblem,
  MODELS_ADVICE,
  loadableModelProblems,
  modelProblems,
  modelsError,
  type LocalSpeechConfig,
} from "./local-models.server";
import { type EngineHealth, type EngineWord, type SpeechEngine } from "./types";
import { whisperPrompt } from "./vocabulary.server";
import { recogniserFor, recogniserNativeProblems } from "./local-recogniser.server";
import { SPEECH_ROLES, waitingForModels } from "../model-store/downloads.server";

export { whisperParams, whisperWorker, type WhisperWorker } from "./local-whisper.server";

// The embedded speech engine (ADR 0011): nothing leaves the machine.
//
//   WAV ──stream──▶ Silero VAD (sherpa-onnx) ──speech stretches──▶ windows of ≤ 28 s ──▶ whisper.cpp
//       (smart-whisper) ──tokens──▶ words (local-words) ──▶ speakers (sherpa-onnx diarization, optional)
//
// - VAD first: the recording is streamed through Silero VAD in 4-second slices, yielding to the event loop
//   between slices (sherpa-onnx's VAD runs on the calling thread, about 1 s per minute of audio here). No
//   speech at all → no words, and whisper is never loaded: the caller reports "no speech".
// - Recognition runs on the speech only: each stretch is padded by 0.2 s, and stretches are packed, with
//   0.1 s of silence between them, into windows of at most 28 s, so one whisper.cpp encoder pass (30 s)
//   covers each window and long silences (where Whisper likes to invent text) are never shown to it. Token
//   times are mapped back through the window's pieces.
// - whisper.cpp runs on a libuv worker thread (smart-whisper's AsyncWorker) with `threads` threads, so the
//   event loop stays free; one window at a time per model file and process (`whisperWorker`, shared with the
//   live engine, whose segments go first), which bounds memory to one model and one whisper state.
//   whisper.cpp cannot be interrupted mid-window: `request.signal` is honoured between VAD slices and
//   between windows (at most one window, a few seconds of work, runs on after an abort).
// - Beam search (5 beams) at temperature 0 with whisper.cpp's fallback, the vocabulary as initial prompt,
//   `language` from the request. A segment that only repeats the prompt (Whisper's habit on unclear audio)
//   is dropped.
// - Memory: never the whole recording as Float32 for recognition (at most one window, 28 s ≈ 1.8 MB, plus
//   the 1 MiB read buffer of the VAD pass). The model stays loaded between jobs (ggml-small ≈ 0.5 GB, plus
//   about 0.2 GB of working state during a window) and is released after `idleUnloadMs` without use.
//   Diarization is the exception: sherpa-onnx clusters speakers over the whole recording in one call, so
//   it holds all samples as Float32 (4 bytes a sample, 920 MB for 4 hours) and copies them once more
//   internally — about 1.9 GB at peak for a 4-hour recording. One recording is diarized at a time per process
//   (`diarizeFile`), so two jobs never hold that twice. It runs only when both LOCAL_SEGMENTATION_MODEL and
//   LOCAL_SPEAKER_EMBEDDING_MODEL are set; otherwise, or when it finds no speaker turn, every word is "S1".

export type LocalEngineOptions = {
  /** Release the whisper model after this long without a transcription (default 10 minutes). */
  idleUnloadMs?: number;
};

export { SAMPLE_RATE } from "./local-wav.server";
export type { LocalSpeechConfig } from "./local-models.server";

export const VAD_CONFIG = {
  threshold: 0.5,
  minSilenceDuration: 0.5,
  minSpeechDuration: 0.25,
  windowSize: 512,
  // Longer speech is cut (sherpa-onnx raises the threshold until it finds a pause), so a stretch fits a window.
  maxSpeechDuration: 20,
};
const VAD_BUFFER_SECONDS = 60;
/** How much audio the VAD is given before the event loop gets a turn. */
export const VAD_SLICE_SAMPLES = 4 * SAMPLE_RATE;
const READ_CHUNK_SAMPLES = 32 * SAMPLE_RATE;
/** Audio kept either side of each speech stretch the VAD finds, so the edges of its first and last word stay in. */
export const PAD_SAMPLES = Math.round(0.2 * SAMPLE_RATE);
const GAP_SAMPLES = Math.round(0.1 * SAMPLE_RATE);
const WINDOW_MAX_SAMPLES = 28 * SAMPLE_RATE;

// ---- Voice activity ------------------------------------------------------------------------------------

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A streaming Silero VAD with the engine's settings (the batch pass, and the live engine per run). */
export function createVad(sherpa: SherpaOnnx, vadModel: string): SherpaVad {
  return new sherpa.Vad(
    { sileroVad: { model: vadModel, ...VAD_CONFIG }, sampleRate: SAMPLE_RATE, numThreads: 1, debug: 0 },
    VAD_BUFFER_SECONDS,
  );
}

async function detectSpeech(
  sherpa: SherpaOnnx,
  vadModel: string,
  file: string,
  info: WavInfo,
  signal?: AbortSignal,
): Promise<SampleRange[]> {
  const vad = createVad(sherpa, vadModel);
  const speech: SampleRange[] = [];
  const drain = () => {
    while (!vad.isEmpty()) {
      const segment = vad.front(false);
      speech.push({ start: segment.start, end: segment.start + segment.samples.length });
      vad.pop();
    }
  };
  const step = VAD_CONFIG.windowSize;
  for await (const chunk of readSampleChunks(file, info, READ_CHUNK_SAMPLES)) {
    for (let slice = 0; slice < chunk.samples.length; slice += VAD_SLICE_SAMPLES) {
      signal?.throwIfAborted();
      // One model window per call: sherpa-onnx misplaces the start of speech (by seconds) when a single
      // call hands it much more than a window.
      const end = Math.min(slice + VAD_SLICE_SAMPLES, chunk.samples.length);
      for (let at = slice; at < end; at += step)
        vad.acceptWaveform(chunk.samples.subarray(at, Math.min(at + step, end)));
      drain();
      await yieldToEventLoop();
    }
  }
  vad.flush();
  drain();
  return speech;
}

/**
 * The speech stretches Silero VAD finds in a 16 kHz mono 16-bit WAV, in seconds. Throws SpeechEngineError
 * (not_configured) when the model or sherpa-onnx is missing.
 */
export async function findSpeech(
  vadModel: string,
  file: string,
  signal?: AbortSignal,
): Promise<Array<{ start: number; end: number }>> {
  const problem = await fileProblem({ role: "VAD model", variable: "LOCAL_VAD_MODEL", file: vadModel, kind: "onnx" });
  if (problem) throw modelsError([problem]);
  const { module } = loadSherpaOnnx();
  const failed = await probeModels("vad", [vadModel]);
  if (failed) throw modelsError([`VAD model ${vadModel} cannot be loaded: ${failed}`]);
  const info = await readWavInfo(file);
  const speech = await detectSpeech(module, vadModel, file, info, signal);
  return speech.map((r) => ({ start: r.start / SAMPLE_RATE, end: r.end / SAMPLE_RATE }));
}

// ---- Recognition windows -------------------------------------------------------------------------------

export type RecognitionWindow = { ranges: SampleRange[]; pieces: WindowPiece[] };

/**
 * Speech stretches (samples) padded, merged where they touch, and packed in order into windows of at most
 * 28 s of audio (0.1 s of silence between pieces). A stretch longer than a window gets a window of its own
 * (whisper.cpp then slides over it).
 */
export function planWindows(speech: SampleRange[], totalSamples: number): RecognitionWindow[] {
  const padded: SampleRange[] = [];
  for (const range of [...speech].sort((a, b) => a.start - b.start)) {
    const start = Math.max(0, range.start - PAD_SAMPLES);
    const end = Math.min(totalSamples, range.end + PAD_SAMPLES);
    if (end <= start) continue;
    const last = padded[padded.length - 1];
    if (last && start <= last.end) {
      if (end <= last.end) continue;
      if (end - last.start <= WINDOW_MAX_SAMPLES) last.end = end;
      else padded.push({ start: last.end, end });
    } else padded.push({ start, end });
  }
  const windows: RecognitionWindow[] = [];
  let current: RecognitionWindow | undefined;
  let used = 0;
  for (const range of padded) {
    const length = range.end - range.start;
    if (!current || used + GAP_SAMPLES + length > WINDOW_MAX_SAMPLES) {
      current = { ranges: [], pieces: [] };
      windows.push(current);
      used = 0;
    }
    const windowStart = current.ranges.length ? used + GAP_SAMPLES : 0;
    current.ranges.push(range);
    current.pieces.push({
      windowStart: windowStart / SAMPLE_RATE,
      fileStart: range.start / SAMPLE_RATE,
      duration: length / SAMPLE_RATE,
    });
    used = windowStart + length;
  }
  return windows;
}

// ---- Speakers -------------------------------------------------------------------------------------------

/**
 * sherpa-onnx's diarization settings for consultations: two or three people (doctor, patient, sometimes a
 * relative), speaking in turns.
 * - threshold: clusters are cut where the cosine distance between (single-linkage) groups of embeddings
 *   exceeds it; larger gives fewer speakers. 0.5 is what sherpa-onnx publishes for its 3D-Speaker examples; a
 *   lower value splits one person into several speakers more readily, which a clinician notices more than an
 *   occasional misattributed sentence. Not tuned on German consultations: no real speaker model is available
 *   on the machines this was written on.
 * - minDurationOn: a turn shorter than this is dropped and its words go to the nearest turn; 0.3 s keeps a
 *   patient's "Ja." or "Nein." (about 0.3–0.5 s) and drops sub-word flickers of the other voice.
 * - minDurationOff: a pause shorter than this inside one speaker's speech does not split the turn.
 */
export const DIARIZATION = { threshold: 0.5, minDurationOn: 0.3, minDurationOff: 0.5 } as const;

const SPEAKER_MODELS = {
  segmentation: { role: "speaker segmentation model", variable: "LOCAL_SEGMENTATION_MODEL" },
  embedding: { role: "speaker embedding model", variable: "LOCAL_SPEAKER_EMBEDDING_MODEL" },
} as const;

/** The one diarization configuration: the engine and its child-process check (probeDiarization) both use it. */
export function diarizationConfig(config: LocalSpeechConfig): SherpaDiarizationConfig {
  const numThreads = Math.max(1, Math.floor(config.threads));
  return {
    segmentation: { pyannote: { model: config.segmentationModel ?? "" }, numThreads },
    embedding: { model: config.embeddingModel ?? "", numThreads },
    clustering: { numClusters: -1, threshold: DIARIZATION.threshold },
    minDurationOn: DIARIZATION.minDurationOn,
    minDurationOff: DIARIZATION.minDurationOff,
  };
}

type Diarizer = InstanceType<SherpaOnnx["OfflineSpeakerDiarization"]>;
const diarizers = new Map<string, Diarizer>();
let diarizationLane: Promise<unknown> = Promise.resolve();

/**
 * Who speaks when in a 16 kHz mono 16-bit WAV: sherpa-onnx's offline diarization with the configured speaker
 * models, as turns sorted by start (speaker numbers are sherpa-onnx's; `assignSpeakers` names them S1, S2, …).
 * No turn at all (silence, or nothing the models call speech) is an empty list. Missing, unloadable or
 * failing speaker models are SpeechEngineError (not_configured) naming the file and its variable.
 * One recording at a time per process (memory: see the top of this file); the speaker models stay loaded.
 */
export async function diarizeFile(
  config: LocalSpeechConfig,
  file: string,
  signal?: AbortSignal,
): Promise<SpeakerTurn[]> {
  const models = { segmentation: config.segmentationModel, embedding: config.embeddingModel };
  const named = (which: keyof typeof SPEAKER_MODELS) =>
    `${SPEAKER_MODELS[which].role} ${models[which]} (${SPEAKER_MODELS[which].variable})`;
  const problems = (
    await Promise.all(
      (["segmentation", "embedding"] as const).map((which) => {
        const model = models[which];
        if (!model) return `${SPEAKER_MODELS[which].variable} is not set`;
        return fileProblem({ ...SPEAKER_MODELS[which], file: model, kind: "onnx" });
      }),
    )
  ).filter((p): p is string => p !== undefined);
  if (problems.length) throw modelsError(problems);

  const sherpaConfig = diarizationConfig(config);
  const failed = await probeDiarization(sherpaConfig);
  if (failed)
    throw modelsError([
      failed.model
        ? `${named(failed.model)} cannot be loaded: ${failed.reason}`
        : `speaker models ${models.segmentation}, ${models.embedding} cannot be loaded: ${failed.reason}`,
    ]);
  const { module, addon } = loadSherpaOnnx();

  const work = async () => {
    signal?.throwIfAborted();
    const info = await readWavInfo(file);
    const samples = await readAllSamples(file, info);
    const key = JSON.stringify(sherpaConfig);
    let segments: SherpaDiarizationSegment[];
    try {
      let diarizer = diarizers.get(key);
      if (!diarizer) {
        diarizer = new module.OfflineSpeakerDiarization(sherpaConfig);
        diarizers.set(key, diarizer);
      }
      const run = addon.offlineSpeakerDiarizationProcessAsync;
      segments = run ? await run(diarizer.handle, samples, () => 0) : diarizer.process(samples);
    } catch (error) {
      throw modelsError([
        `speaker separation failed with ${named("segmentation")} and ${named("embedding")}: ${(error as Error).message}`,
      ]);
    }
    signal?.throwIfAborted();
    return segments
      .map((s) => ({ start: s.start, end: s.end, speaker: s.speaker }))
      .sort((a, b) => a.start - b.start || a.speaker - b.speaker);
  };
  const result = diarizationLane.then(work);
  diarizationLane = result.catch(() => undefined);
  return result;
}

// ---- The engine ----------------------------------------------------------------------------------------

/** Files and native modules, cheaply (loads nothing): the batch and the live engine's health. */
export async function localEngineHealth(config: LocalSpeechConfig): Promise<EngineHealth> {
  const problems = await modelProblems(config);
  if (problems.length) {
    // Still arriving (issue 21): say how far, rather than advising the operator to fetch what is on its way.
    const coming = waitingForModels(SPEECH_ROLES);
    if (coming)
      return {
        status: "not_configured",
        detail: `the models are downloading (${coming.percent} %); jobs wait for them`,
      };
    return { status: "not_configured", detail: `${problems.join("; ")}. ${MODELS_ADVICE}` };
  }
  const native = recogniserNativeProblems(config);
  if (native.problems.length)
    return { status: "not_configured", detail: `${native.problems.join("; ")}. ${native.advice}` };
  if (!diarizationEnabled(config) && (config.segmentationModel || config.embeddingModel))
    return {
      status: "healthy",
      detail: "speaker separation is off: it needs both LOCAL_SEGMENTATION_MODEL and LOCAL_SPEAKER_EMBEDDING_MODEL",
    };
  return { status: "healthy" };
}

export type LocalSpeechEngine = SpeechEngine & {
  /** Frees the whisper model now (tests, shutdown); the next transcription loads it again. */
  unload(): Promise<void>;
};

export function createLocalSpeechEngine(
  config: LocalSpeechConfig,
  options: LocalEngineOptions = {},
): LocalSpeechEngine {
  const { worker, ensureNative } = recogniserFor(config, options);

  return {
    name: "local",

    async transcribe(request) {
      const { signal } = request;
      signal?.throwIfAborted();
      // Present, well-formed and matching its pin (issue 21), before native code touches any of them.
      const problems = await loadableModelProblems(config);
      if (problems.length) throw modelsError(problems);
      const info = await readWavInfo(request.file);
      const sherpa = loadSherpaOnnx();
      ensureNative(); // before the VAD pass: a missing addon fails the job at once

      const vadFailed = await probeModels("vad", [config.vadModel]);
      if (vadFailed) throw modelsError([`VAD model ${config.vadModel} cannot be loaded: ${vadFailed}`]);
      const speech = await detectSpeech(sherpa.module, config.vadModel, request.file, info, signal);
      const result = { engine: "local" as const, language: request.language, audioSeconds: info.seconds };
      if (speech.length === 0) return { ...result, words: [] };

      const prompt = whisperPrompt(request.vocabulary);
      let words: EngineWord[] = [];
      for (const window of planWindows(speech, info.samples)) {
        signal?.throwIfAborted();
        const pcm = await readSampleRanges(request.file, info, window.ranges, GAP_SAMPLES);
        words.push(...(await worker.recognise(pcm, { language: request.language, prompt, pieces: window.pieces })));
      }

      if (words.length > 0 && diarizationEnabled(config)) {
        signal?.throwIfAborted();
        words = assignSpeakers(words, await diarizeFile(config, request.file, signal));
      }
      signal?.throwIfAborted();
      return { ...result, words };
    },

    check: () => localEngineHealth(config),

    unload: () => worker.unload(),
  };
}
