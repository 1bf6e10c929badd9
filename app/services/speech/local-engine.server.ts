import {
  loadSherpaOnnx,
  loadSmartWhisper,
  NATIVE_ADVICE,
  nativeModuleProblems,
  probeModels,
  type NativeWhisperModel,
  type SherpaAddon,
  type SherpaOnnx,
  type SmartWhisperAddon,
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
import {
  assignSpeakers,
  withoutPromptEcho,
  wordsFromWhisper,
  type SpeakerTurn,
  type WhisperSegment,
  type WindowPiece,
} from "./local-words.server";
import {
  diarizationEnabled,
  fileProblem,
  MODELS_ADVICE,
  modelProblems,
  modelsError,
  type LocalSpeechConfig,
} from "./local-models.server";
import { SpeechEngineError, type EngineHealth, type EngineWord, type SpeechEngine } from "./types";
import { whisperPrompt } from "./vocabulary.server";

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
//   event loop stays free; one window at a time per engine, which bounds memory to one whisper state.
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
//   internally — about 1.9 GB at peak for a 4-hour recording. It runs only when both
//   LOCAL_SEGMENTATION_MODEL and LOCAL_SPEAKER_EMBEDDING_MODEL are set; otherwise every word is "S1".

export type LocalEngineOptions = {
  /** Release the whisper model after this long without a transcription (default 10 minutes). */
  idleUnloadMs?: number;
};

export { SAMPLE_RATE } from "./local-wav.server";
export type { LocalSpeechConfig } from "./local-models.server";

const VAD_CONFIG = {
  threshold: 0.5,
  minSilenceDuration: 0.5,
  minSpeechDuration: 0.25,
  windowSize: 512,
  // Longer speech is cut (sherpa-onnx raises the threshold until it finds a pause), so a stretch fits a window.
  maxSpeechDuration: 20,
};
const VAD_BUFFER_SECONDS = 60;
const VAD_SLICE_SAMPLES = 4 * SAMPLE_RATE;
const READ_CHUNK_SAMPLES = 32 * SAMPLE_RATE;
const PAD_SAMPLES = Math.round(0.2 * SAMPLE_RATE);
const GAP_SAMPLES = Math.round(0.1 * SAMPLE_RATE);
const WINDOW_MAX_SAMPLES = 28 * SAMPLE_RATE;
const MIN_WINDOW_SAMPLES = Math.round(1.5 * SAMPLE_RATE);
const DIARIZATION_THRESHOLD = 0.5;
const DEFAULT_IDLE_UNLOAD_MS = 10 * 60_000;

// ---- Voice activity ------------------------------------------------------------------------------------

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

async function detectSpeech(
  sherpa: SherpaOnnx,
  vadModel: string,
  file: string,
  info: WavInfo,
  signal?: AbortSignal,
): Promise<SampleRange[]> {
  const vad = new sherpa.Vad(
    { sileroVad: { model: vadModel, ...VAD_CONFIG }, sampleRate: SAMPLE_RATE, numThreads: 1, debug: 0 },
    VAD_BUFFER_SECONDS,
  );
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

function runWhisper(
  addon: SmartWhisperAddon,
  model: NativeWhisperModel,
  pcm: Float32Array,
  params: Record<string, unknown>,
): Promise<WhisperSegment[]> {
  return new Promise((resolve, reject) => {
    const fail = (detail: string, cause?: unknown) =>
      reject(new SpeechEngineError("permanent", `whisper.cpp failed: ${detail}`, { cause }));
    try {
      addon.transcribe(
        model.handle,
        pcm,
        params,
        (result) => {
          if (Array.isArray(result)) resolve(result as WhisperSegment[]);
          else fail(result instanceof Error ? result.message : String(result), result);
        },
        () => {},
      );
    } catch (error) {
      fail((error as Error).message, error);
    }
  });
}

/** The parameters the engine gives whisper.cpp (the bench compares the bare binding with the same ones). */
export function whisperParams(args: { language: string; threads: number; prompt: string }): Record<string, unknown> {
  return {
    language: args.language,
    n_threads: args.threads,
    format: "detail",
    token_timestamps: true,
    strategy: 1,
    beam_size: 5,
    temperature: 0,
    no_context: true,
    // whisper.cpp's default, kept on purpose: "suppressing non-speech tokens" also bans / : ; + ( ) —
    // "120/80", "Diagnose:" — and the VAD already keeps noise and music away from Whisper.
    suppress_non_speech_tokens: false,
    print_progress: false,
    print_realtime: false,
    print_timestamps: false,
    print_special: false,
    ...(args.prompt ? { initial_prompt: args.prompt } : {}),
  };
}

// ---- The engine ----------------------------------------------------------------------------------------

export type LocalSpeechEngine = SpeechEngine & {
  /** Frees the whisper model now (tests, shutdown); the next transcription loads it again. */
  unload(): Promise<void>;
};

export function createLocalSpeechEngine(
  config: LocalSpeechConfig,
  options: LocalEngineOptions = {},
): LocalSpeechEngine {
  const idleUnloadMs = options.idleUnloadMs ?? DEFAULT_IDLE_UNLOAD_MS;
  const threads = Math.max(1, Math.floor(config.threads));
  let model: NativeWhisperModel | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let diarizer: InstanceType<SherpaOnnx["OfflineSpeakerDiarization"]> | undefined;
  // One whisper call at a time per engine; loading and unloading go through the same lane.
  let lane: Promise<unknown> = Promise.resolve();

  function exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = lane.then(task, task);
    lane = run.catch(() => undefined);
    return run;
  }

  async function freeModel() {
    const current = model;
    model = undefined;
    if (current && !current.freed) await current.free();
  }

  function scheduleUnload() {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => void exclusive(freeModel).catch(() => undefined), idleUnloadMs);
    idleTimer.unref();
  }

  /** Inside the lane only. */
  async function whisperModel(addon: SmartWhisperAddon): Promise<NativeWhisperModel> {
    if (model && !model.freed) return model;
    const failed = await probeModels("whisper", [config.whisperModel]);
    if (failed) throw modelsError([`whisper model ${config.whisperModel} cannot be loaded: ${failed}`]);
    try {
      model = await addon.WhisperModel.load(config.whisperModel, false);
    } catch (error) {
      throw modelsError([`whisper model ${config.whisperModel} cannot be loaded: ${(error as Error).message}`]);
    }
    return model;
  }

  async function diarize(
    sherpa: { module: SherpaOnnx; addon: SherpaAddon },
    file: string,
    info: WavInfo,
  ): Promise<SpeakerTurn[]> {
    const files = [config.segmentationModel!, config.embeddingModel!];
    const failed = await probeModels("diarization", files);
    if (failed) throw modelsError([`speaker models ${files.join(", ")} cannot be loaded: ${failed}`]);
    diarizer ??= new sherpa.module.OfflineSpeakerDiarization({
      segmentation: { pyannote: { model: files[0] }, numThreads: threads },
      embedding: { model: files[1], numThreads: threads },
      clustering: { numClusters: -1, threshold: DIARIZATION_THRESHOLD },
      minDurationOn: 0.3,
      minDurationOff: 0.5,
    });
    const samples = await readAllSamples(file, info);
    const run = sherpa.addon.offlineSpeakerDiarizationProcessAsync;
    const segments = run ? await run(diarizer.handle, samples, () => 0) : diarizer.process(samples);
    return segments.map((s) => ({ start: s.start, end: s.end, speaker: s.speaker }));
  }

  return {
    name: "local",

    async transcribe(request) {
      const { signal } = request;
      signal?.throwIfAborted();
      const problems = await modelProblems(config);
      if (problems.length) throw modelsError(problems);
      const info = await readWavInfo(request.file);
      const sherpa = loadSherpaOnnx();
      const addon = loadSmartWhisper();

      const vadFailed = await probeModels("vad", [config.vadModel]);
      if (vadFailed) throw modelsError([`VAD model ${config.vadModel} cannot be loaded: ${vadFailed}`]);
      const speech = await detectSpeech(sherpa.module, config.vadModel, request.file, info, signal);
      const result = { engine: "local" as const, language: request.language, audioSeconds: info.seconds };
      if (speech.length === 0) return { ...result, words: [] };

      const prompt = whisperPrompt(request.vocabulary);
      const params = whisperParams({ language: request.language, threads, prompt });

      let words: EngineWord[] = [];
      for (const window of planWindows(speech, info.samples)) {
        signal?.throwIfAborted();
        let pcm = await readSampleRanges(request.file, info, window.ranges, GAP_SAMPLES);
        if (pcm.length < MIN_WINDOW_SAMPLES) {
          // whisper.cpp skips input under 1 s without a word; silence after a short "Ja." fixes that.
          const padded = new Float32Array(MIN_WINDOW_SAMPLES);
          padded.set(pcm);
          pcm = padded;
        }
        const segments = await exclusive(async () => {
          clearTimeout(idleTimer);
          try {
            return await runWhisper(addon, await whisperModel(addon), pcm, params);
          } finally {
            scheduleUnload();
          }
        });
        words.push(...wordsFromWhisper(withoutPromptEcho(segments, prompt), { pieces: window.pieces }));
      }

      if (words.length > 0 && diarizationEnabled(config)) {
        signal?.throwIfAborted();
        words = assignSpeakers(words, await diarize(sherpa, request.file, info));
      }
      signal?.throwIfAborted();
      return { ...result, words };
    },

    async check(): Promise<EngineHealth> {
      const problems = await modelProblems(config);
      if (problems.length) return { status: "not_configured", detail: `${problems.join("; ")}. ${MODELS_ADVICE}` };
      const native = nativeModuleProblems();
      if (native.length) return { status: "not_configured", detail: `${native.join("; ")}. ${NATIVE_ADVICE}` };
      if (!diarizationEnabled(config) && (config.segmentationModel || config.embeddingModel))
        return {
          status: "healthy",
          detail: "speaker separation is off: it needs both LOCAL_SEGMENTATION_MODEL and LOCAL_SPEAKER_EMBEDDING_MODEL",
        };
      return { status: "healthy" };
    },

    unload() {
      clearTimeout(idleTimer);
      return exclusive(freeModel);
    },
  };
}
