import { constants } from "node:fs";
import { access, open, readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { createModelLane } from "./local-model-lane.server";
import { loadSherpaOnnx } from "./local-native.server";
import { filesStamp, probeReason, probeSaid, runProbeProcess } from "./local-probe.server";
import { SAMPLE_RATE } from "./local-wav.server";
import type { WhisperWorker } from "./local-whisper.server";
import { wordsFromWhisper, type WhisperToken, type WindowPiece } from "./local-words.server";
import { SpeechEngineError, type EngineWord } from "./types";

// NVIDIA Parakeet-TDT-0.6B-v3 for the embedded engines, run by sherpa-onnx-node 1.13.8 as an offline "nemo
// transducer" (the int8 export csukuangfj/sherpa-onnx-nemo-parakeet-tdt-0.6b-v3-int8: encoder.int8.onnx,
// decoder.int8.onnx, joiner.int8.onnx, tokens.txt). The worker has the shape of the whisper worker
// (local-whisper.server.ts), so the batch and the live engine can hold either:
// - Loading and decoding run off the event loop: OfflineRecognizer.createAsync and decodeAsync run on libuv
//   worker threads (sherpa-onnx's CreateRecognizerAsyncWorker and DecodeOfflineStreamAsyncWorker). The features
//   are not: acceptWaveform computes the fbank on the calling thread, once per stream (an offline stream takes
//   its audio in one call), measured at 40–120 ms per 28 s window on this project's 2-core machines — the stall
//   each window costs the event loop, about what the VAD pass costs per 28 s of audio. One window at a time per
//   model and process, live segments before queued batch windows, the model released after 10 idle minutes.
// - No language and no prompt: Parakeet v3 finds the language itself (25 European languages, German among them)
//   and takes no text context. sherpa-onnx's only biasing for NeMo transducers is hotwords with
//   modified_beam_search, which needs a bpe.vocab this export does not ship; greedy search is what the published
//   figures were measured with. The vocabulary prompt is therefore ignored.
// - Words: Parakeet v3 writes capitals and punctuation itself. SentencePiece's "▁" (sherpa-onnx hands it over
//   as a leading space) starts a word; the rules of local-words.server.ts (punctuation words, endOfSentence,
//   abbreviations, lowest token probability per word, times mapped through the window's pieces) apply as they
//   are, with token times from TDT: a token starts at its frame and lasts its predicted duration.
// - sherpa-onnx ends the whole process on a model it cannot use (exit(-1) on missing metadata or a tokens.txt
//   that does not match, SIGABRT when onnxruntime throws). So the files are checked cheaply first, then loaded
//   and run once on a second of silence in a child process; only a model that passed is loaded here.

export type ParakeetConfig = {
  encoder: string;
  decoder: string;
  joiner: string;
  tokens: string;
  threads: number;
};

export type ParakeetWorkerOptions = {
  /** Release the model after this long without a recognition (default 10 minutes). */
  idleUnloadMs?: number;
};

/** The same shape as the whisper worker: the engines can hold either. */
export type ParakeetWorker = WhisperWorker;

/** sherpa-onnx's result for one stream (OfflineRecognitionResult::AsJsonString). */
export type ParakeetResult = {
  text: string;
  tokens: string[];
  /** Seconds from the start of the window: encoder frame × 10 ms × subsampling factor (80 ms for Parakeet). */
  timestamps: number[];
  /** Seconds: the TDT duration of each token (0 when the next token came from the same frame). */
  durations?: number[];
  /** Natural log of each token's probability (log-softmax over the vocabulary). */
  ys_log_probs?: number[];
};

type OfflineStream = { acceptWaveform(wave: { samples: Float32Array; sampleRate: number }): void };
type OfflineRecognizer = {
  createStream(): OfflineStream;
  decodeAsync(stream: OfflineStream): Promise<ParakeetResult>;
};
type SherpaOfflineAsr = {
  OfflineRecognizer: { createAsync(config: Record<string, unknown>): Promise<OfflineRecognizer> };
};

const require = createRequire(import.meta.url);

const DEFAULT_IDLE_UNLOAD_MS = 10 * 60_000;
/** Parakeet v3's fbank bins; the encoder's feat_dim metadata overrides it. */
const FEATURE_DIM = 128;
/**
 * A window is never shorter than this: an input with no complete fbank frame reaches the encoder as zero frames,
 * and an onnxruntime error inside sherpa-onnx aborts the process. Silence after a short "Ja." costs nothing.
 */
const MIN_WINDOW_SAMPLES = SAMPLE_RATE;
/** tokens.txt of Parakeet v3 is 94 KB; anything far larger is some other file. */
const MAX_TOKENS_BYTES = 16 * 1024 * 1024;
const ONNX_FIRST_BYTE = 0x08;
/** <unk>, <blk>, byte pieces such as <0x0A>: never words. */
const SPECIAL_TOKEN = /^<[^<>\s]+>$/u;

export const PARAKEET_ADVICE =
  "Put the files of the sherpa-onnx export sherpa-onnx-nemo-parakeet-tdt-0.6b-v3-int8 (encoder.int8.onnx, " +
  "decoder.int8.onnx, joiner.int8.onnx, tokens.txt) where the configuration points.";

/** The recognizer configuration sherpa-onnx-node takes (the child-process check loads the same). */
export function parakeetRecognizerConfig(config: ParakeetConfig): Record<string, unknown> {
  return {
    featConfig: { sampleRate: SAMPLE_RATE, featureDim: FEATURE_DIM },
    modelConfig: {
      transducer: { encoder: config.encoder, decoder: config.decoder, joiner: config.joiner },
      tokens: config.tokens,
      numThreads: Math.max(1, Math.floor(config.threads)),
      // Named, not detected: detection reads the encoder's model_type metadata ("EncDecRNNTBPEModel") and
      // loads the model once more to do so.
      modelType: "nemo_transducer",
      debug: 0,
    },
    // The only method sherpa-onnx's TDT decoder has besides modified_beam_search (for hotwords).
    decodingMethod: "greedy_search",
  };
}

export function parakeetModelsError(problems: string[]) {
  return new SpeechEngineError(
    "not_configured",
    `The local speech engine cannot use its Parakeet model: ${problems.join("; ")}. ${PARAKEET_ADVICE}`,
    { userMessageKey: "transcriptions:errors.modelsMissing" },
  );
}

// ---- Cheap checks: what /api/health and the first load rely on before native code touches a file ---------

type ModelFile = { role: string; file: string };

function modelFiles(config: ParakeetConfig): ModelFile[] {
  return [
    { role: "Parakeet encoder", file: config.encoder },
    { role: "Parakeet decoder", file: config.decoder },
    { role: "Parakeet joiner", file: config.joiner },
  ];
}

async function readableFile(where: string, file: string): Promise<{ problem?: string; size: number }> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return { problem: `${where} is not a file`, size: 0 };
    if (info.size < 4) return { problem: `${where} is empty`, size: info.size };
    await access(file, constants.R_OK);
    return { size: info.size };
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    return { problem: missing ? `${where} is missing` : `${where} is not readable`, size: 0 };
  }
}

async function onnxProblem({ role, file }: ModelFile): Promise<string | undefined> {
  const where = `${role} ${file}`;
  const { problem } = await readableFile(where, file);
  if (problem) return problem;
  const handle = await open(file, "r");
  try {
    const head = Buffer.alloc(1);
    await handle.read(head, 0, 1, 0);
    return head[0] === ONNX_FIRST_BYTE ? undefined : `${where} is not an ONNX model`;
  } finally {
    await handle.close();
  }
}

async function tokensProblem(file: string): Promise<string | undefined> {
  const where = `Parakeet tokens ${file}`;
  const { problem, size } = await readableFile(where, file);
  if (problem) return problem;
  if (size > MAX_TOKENS_BYTES) return `${where} is not a tokens.txt (${size} bytes)`;
  const lines = (await readFile(file, "utf8")).split("\n").filter((line) => line.trim() !== "");
  // sherpa-onnx exits the process unless the blank is the last token, numbered as such.
  const last = lines[lines.length - 1]?.trim().split(/\s+/u) ?? [];
  if (last[0] !== "<blk>" || Number(last[1]) !== lines.length - 1)
    return `${where} is not a NeMo tokens.txt (its last line must be "<blk> ${lines.length - 1}")`;
  return undefined;
}

/** Present, readable, of the right kind. Reads one byte of each ONNX file and the tokens; loads nothing. */
export async function parakeetModelProblems(config: ParakeetConfig): Promise<string[]> {
  const problems = await Promise.all([...modelFiles(config).map(onnxProblem), tokensProblem(config.tokens)]);
  return problems.filter((p): p is string => p !== undefined);
}

// ---- Loading the model once in a child process first ---------------------------------------------------

// CommonJS run with `node -e`: loads the recognizer as the worker will and decodes a second of silence (a joiner
// of the wrong shape only fails when it runs); exits 0 only if both worked.
const PROBE_SOURCE = `
const [mod, config] = process.argv.slice(1);
const m = require(mod);
const recognizer = new m.OfflineRecognizer(JSON.parse(config));
const stream = recognizer.createStream();
stream.acceptWaveform({ samples: new Float32Array(16000), sampleRate: 16000 });
recognizer.decode(stream);
JSON.parse(JSON.stringify(recognizer.getResult(stream)));
process.exit(0);
`;

const PROBE_TIMEOUT_MS = 180_000;
/** The lines of a failed check that say what went wrong. */
const TELLING_LINE = /error|fail|invalid|what\(\)|terminate|wrong|unknown|not |!=|does not exist|expect/i;
const probes = new Map<string, Promise<string | undefined>>();

async function runProbe(config: ParakeetConfig): Promise<string | undefined> {
  const recognizerConfig = JSON.stringify(parakeetRecognizerConfig({ ...config, threads: 1 }));
  const failure = await runProbeProcess(
    PROBE_SOURCE,
    [require.resolve("sherpa-onnx-node"), recognizerConfig],
    PROBE_TIMEOUT_MS,
  );
  if (!failure) return undefined;
  if (failure.stderr === undefined) return failure.why;
  return probeReason(failure.why, probeSaid(failure.stderr, TELLING_LINE));
}

/**
 * Loads the model in a child process. Resolves to undefined when it loads and decodes, else to the reason.
 * Remembered per file, size and modification time, so a replaced file is checked again.
 */
export async function probeParakeet(config: ParakeetConfig): Promise<string | undefined> {
  const stamped = await filesStamp([config.encoder, config.decoder, config.joiner, config.tokens]);
  if ("unreadable" in stamped) return stamped.unreadable;
  let probe = probes.get(stamped.stamp);
  if (!probe) {
    probe = runProbe(config);
    probes.set(stamped.stamp, probe);
  }
  return probe;
}

// ---- Tokens → words ---------------------------------------------------------------------------------------

/**
 * The words of one window's result, timed in the recording through `pieces` (omitted: window time is recording
 * time). `windowSeconds` is the length of the audio decoded; no word ends after it.
 */
export function wordsFromParakeet(
  result: ParakeetResult,
  options: { windowSeconds: number; pieces?: WindowPiece[]; speaker?: string | null },
): EngineWord[] {
  const tokens: WhisperToken[] = [];
  result.tokens.forEach((text, i) => {
    if (SPECIAL_TOKEN.test(text.trim())) return;
    const start = result.timestamps[i];
    const logProb = result.ys_log_probs?.[i];
    tokens.push({
      text: text.replace(/▁/gu, " "),
      // Missing → NaN → local-words' "unknown" confidence.
      p: typeof logProb === "number" ? Math.exp(logProb) : Number.NaN,
      from: start * 1000,
      to: (start + (result.durations?.[i] ?? 0)) * 1000,
    });
  });
  if (tokens.length === 0) return [];
  const segment = {
    from: 0,
    to: options.windowSeconds * 1000,
    text: tokens.map((t) => t.text).join(""),
    tokens,
  };
  return wordsFromWhisper([segment], { pieces: options.pieces, speaker: options.speaker });
}

// ---- The worker: one model and one lane per model and process -----------------------------------------

// How many recognizers this process still holds: one is freed (the native model with it) when the garbage
// collector finalises it after `unload`; sherpa-onnx-node offers no explicit free for offline recognizers.
let recognizersInMemory = 0;
const finalised = new FinalizationRegistry<undefined>(() => {
  recognizersInMemory -= 1;
});

/** Recognizers loaded and not yet collected (tests, diagnostics). */
export function parakeetRecognizersInMemory(): number {
  return recognizersInMemory;
}

const workers = new Map<string, ParakeetWorker>();

/** The process's worker for the model files in `config` (created on first use; `idleUnloadMs` of the first). */
export function parakeetWorker(config: ParakeetConfig, options: ParakeetWorkerOptions = {}): ParakeetWorker {
  const threads = Math.max(1, Math.floor(config.threads));
  const key = [config.encoder, config.decoder, config.joiner, config.tokens, threads].join("\0");
  let worker = workers.get(key);
  if (!worker) {
    worker = createParakeetWorker({ ...config, threads }, options.idleUnloadMs ?? DEFAULT_IDLE_UNLOAD_MS);
    workers.set(key, worker);
  }
  return worker;
}

function describe(config: ParakeetConfig) {
  return `Parakeet model (encoder ${config.encoder}, decoder ${config.decoder}, joiner ${config.joiner}, tokens ${config.tokens})`;
}

function createParakeetWorker(config: ParakeetConfig, idleUnloadMs: number): ParakeetWorker {
  // One decode at a time (bounded memory: one model, one window); loading and unloading use the same lane.
  const lane = createModelLane<OfflineRecognizer>({
    idleUnloadMs,
    async load() {
      const problems = await parakeetModelProblems(config);
      if (problems.length) throw parakeetModelsError(problems);
      const sherpa = loadSherpaOnnx().module as unknown as SherpaOfflineAsr;
      const failed = await probeParakeet(config);
      if (failed) throw parakeetModelsError([`${describe(config)} cannot be loaded: ${failed}`]);
      let recognizer: OfflineRecognizer;
      try {
        recognizer = await sherpa.OfflineRecognizer.createAsync(parakeetRecognizerConfig(config));
      } catch (error) {
        throw parakeetModelsError([`${describe(config)} cannot be loaded: ${(error as Error).message}`]);
      }
      recognizersInMemory += 1;
      finalised.register(recognizer, undefined);
      return recognizer;
    },
  });

  async function decode(loadedRecognizer: OfflineRecognizer, pcm: Float32Array): Promise<ParakeetResult> {
    try {
      const stream = loadedRecognizer.createStream();
      stream.acceptWaveform({ samples: pcm, sampleRate: SAMPLE_RATE });
      return await loadedRecognizer.decodeAsync(stream);
    } catch (error) {
      throw new SpeechEngineError("permanent", `sherpa-onnx (Parakeet) failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  return {
    load: () => lane.run(async () => undefined, true),

    // `language` and `prompt` are ignored: Parakeet v3 detects the language and takes no prompt (see above).
    async recognise(pcm, request) {
      let input = pcm;
      if (input.length < MIN_WINDOW_SAMPLES) {
        input = new Float32Array(MIN_WINDOW_SAMPLES);
        input.set(pcm);
      }
      const result = await lane.run((loadedRecognizer) => decode(loadedRecognizer, input), request.urgent);
      return wordsFromParakeet(result, { windowSeconds: input.length / SAMPLE_RATE, pieces: request.pieces });
    },

    hold: () => lane.hold(),

    unload: () => lane.unload(),
  };
}
