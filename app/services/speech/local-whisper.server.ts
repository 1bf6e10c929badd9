import { loadSmartWhisper, probeModels, type NativeWhisperModel, type SmartWhisperAddon } from "./local-native.server";
import { createModelLane } from "./local-model-lane.server";
import { modelsError, type LocalSpeechConfig } from "./local-models.server";
import { SAMPLE_RATE } from "./local-wav.server";
import { withoutPromptEcho, wordsFromWhisper, type WhisperSegment, type WindowPiece } from "./local-words.server";
import { SpeechEngineError, type EngineWord } from "./types";

// whisper.cpp for the embedded engines (ADR 0011): the batch engine (local-engine.server.ts) and the live engine
// (live/engines/local-live.server.ts) of a process share one worker per model file — one model in memory and one
// whisper.cpp call at a time, live segments first.

export type WhisperWorkerOptions = {
  /** Release the whisper model after this long without a recognition (default 10 minutes). */
  idleUnloadMs?: number;
};

/** whisper.cpp skips input under 1 s without a word; silence after a short "Ja." fixes that. */
const MIN_WINDOW_SAMPLES = Math.round(1.5 * SAMPLE_RATE);
const DEFAULT_IDLE_UNLOAD_MS = 10 * 60_000;

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

// ---- The whisper worker: one model and one lane per model file and process ----------------------------

export type WhisperWorker = {
  /** Checks and loads the model now (a live run does, so its first segment does not wait for the load). */
  load(): Promise<void>;
  /**
   * The words whisper.cpp hears in `pcm` (one window, ≤ 28 s), timed in the recording through `pieces`.
   * `urgent` work (a live run, someone waiting for it) goes before batch windows still queued.
   */
  recognise(
    pcm: Float32Array,
    request: { language: string; prompt: string; pieces: WindowPiece[]; urgent?: boolean },
  ): Promise<EngineWord[]>;
  /** Keeps the model loaded until the returned release is called (an open live run: no reload mid-session). */
  hold(): () => void;
  /** Frees the model now (tests, shutdown); the next recognition loads it again. */
  unload(): Promise<void>;
};

// The batch engine and the live engine of a process share the worker of their model file: one model in
// memory (ggml-small ≈ 0.5 GB) and one whisper.cpp call at a time, whoever asks.
const workers = new Map<string, WhisperWorker>();

/** The process's worker for `config.whisperModel` (created on first use; `idleUnloadMs` of the first caller). */
export function whisperWorker(
  config: Pick<LocalSpeechConfig, "whisperModel" | "threads">,
  options: WhisperWorkerOptions = {},
): WhisperWorker {
  const threads = Math.max(1, Math.floor(config.threads));
  const key = `${config.whisperModel}\0${threads}`;
  let worker = workers.get(key);
  if (!worker) {
    worker = createWhisperWorker(config.whisperModel, threads, options.idleUnloadMs ?? DEFAULT_IDLE_UNLOAD_MS);
    workers.set(key, worker);
  }
  return worker;
}

function createWhisperWorker(file: string, threads: number, idleUnloadMs: number): WhisperWorker {
  // One whisper call at a time; loading and unloading go through the same lane.
  const lane = createModelLane<NativeWhisperModel>({
    idleUnloadMs,
    usable: (model) => !model.freed,
    free: async (model) => {
      if (!model.freed) await model.free();
    },
    async load() {
      const addon = loadSmartWhisper();
      const failed = await probeModels("whisper", [file]);
      if (failed) throw modelsError([`whisper model ${file} cannot be loaded: ${failed}`]);
      try {
        return await addon.WhisperModel.load(file, false);
      } catch (error) {
        throw modelsError([`whisper model ${file} cannot be loaded: ${(error as Error).message}`]);
      }
    },
  });

  function inLane<T>(task: (addon: SmartWhisperAddon, model: NativeWhisperModel) => Promise<T>, urgent = false) {
    const addon = loadSmartWhisper();
    return lane.run((model) => task(addon, model), urgent);
  }

  return {
    load: () => inLane(async () => undefined, true),

    async recognise(pcm, request) {
      let input = pcm;
      if (input.length < MIN_WINDOW_SAMPLES) {
        // whisper.cpp skips input under 1 s without a word; silence after a short "Ja." fixes that.
        input = new Float32Array(MIN_WINDOW_SAMPLES);
        input.set(pcm);
      }
      const params = whisperParams({ language: request.language, threads, prompt: request.prompt });
      const segments = await inLane((addon, loaded) => runWhisper(addon, loaded, input, params), request.urgent);
      return wordsFromWhisper(withoutPromptEcho(segments, request.prompt), { pieces: request.pieces });
    },

    hold: () => lane.hold(),

    unload: () => lane.unload(),
  };
}
