import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { filesStamp, probeReason, probeSaid, runProbeProcess } from "./local-probe.server";
import { SpeechEngineError } from "./types";

// The local engine's two native modules, loaded on first use only, so the app starts (and every other engine
// works) when they are missing or failed to build:
// - smart-whisper 0.8.1: whisper.cpp compiled by node-gyp at `npm install`. Its raw addon is loaded directly
//   (build/Release/smart-whisper.node): the package's index creates ~/.smart-whisper/models at import and
//   its Whisper class keeps a 5-minute offload timer; neither is wanted in a server.
// - sherpa-onnx-node 1.13.8: prebuilt (sherpa-onnx-linux-x64 etc.), for Silero VAD and speaker diarization.
//
// Both crash the whole process on a model file they cannot use: smart-whisper dereferences the null context
// whisper.cpp returns for a damaged or foreign file (SIGSEGV), and onnxruntime's exception escapes sherpa-onnx
// (SIGABRT). So every model file is first loaded once in a short-lived child process (`probeModels`,
// `probeDiarization`); only a file that passed is loaded here. A partial download, a wrong file or a model of
// the wrong kind becomes a clear `not_configured` error instead of a worker that dies on every job.

const require = createRequire(import.meta.url);

export type NativeWhisperModel = { readonly handle: unknown; readonly freed: boolean; free(): Promise<void> };

export type SmartWhisperAddon = {
  WhisperModel: { load(file: string, gpu: boolean): Promise<NativeWhisperModel> };
  /** Runs whisper_full on a libuv worker thread; `finish` gets the segments or an Error. */
  transcribe(
    handle: unknown,
    pcm: Float32Array,
    params: Record<string, unknown>,
    finish: (result: unknown) => void,
    progress: (segment: unknown) => void,
  ): void;
};

export type SherpaVad = {
  acceptWaveform(samples: Float32Array): void;
  isEmpty(): boolean;
  front(enableExternalBuffer?: boolean): { start: number; samples: Float32Array };
  pop(): void;
  flush(): void;
};

export type SherpaDiarizationSegment = { start: number; end: number; speaker: number };

/** sherpa-onnx's OfflineSpeakerDiarizationConfig, as far as the engine sets it. */
export type SherpaDiarizationConfig = {
  segmentation: { pyannote: { model: string }; numThreads: number };
  embedding: { model: string; numThreads: number };
  clustering: { numClusters: number; threshold: number };
  minDurationOn: number;
  minDurationOff: number;
};

export type SherpaOnnx = {
  Vad: new (config: Record<string, unknown>, bufferSizeInSeconds: number) => SherpaVad;
  OfflineSpeakerDiarization: new (config: SherpaDiarizationConfig) => {
    handle: unknown;
    sampleRate: number;
    process(samples: Float32Array): SherpaDiarizationSegment[];
  };
};

export type SherpaAddon = {
  /** Not exposed by the package's JS wrapper: the same work on a worker thread, with progress. */
  offlineSpeakerDiarizationProcessAsync?: (
    handle: unknown,
    samples: Float32Array,
    progress: (done: number, total: number) => number,
  ) => Promise<SherpaDiarizationSegment[]>;
};

export const NATIVE_ADVICE =
  "Run `npm install` (smart-whisper compiles whisper.cpp then: it needs g++, make and python3), or choose another " +
  "SPEECH_ENGINE.";

const SMART_WHISPER_ADVICE =
  "smart-whisper compiles whisper.cpp during `npm install`; it needs g++, make and python3, and npm runs its install " +
  'script only because package.json lists it under "allowScripts". Run `npm rebuild smart-whisper` (with ' +
  'CFLAGS="-mavx2 -mfma -mf16c" CXXFLAGS="-mavx2 -mfma -mf16c" for speed), or choose another SPEECH_ENGINE.';

function nativeError(message: string, cause?: unknown) {
  return new SpeechEngineError("not_configured", message, {
    userMessageKey: "transcriptions:errors.engineNotConfigured",
    cause,
  });
}

/** Where smart-whisper's compiled addon should be; undefined when the package is not installed. */
export function smartWhisperAddonPath(): string | undefined {
  try {
    return path.join(path.dirname(require.resolve("smart-whisper/package.json")), "build/Release/smart-whisper.node");
  } catch {
    return undefined;
  }
}

function sherpaPackageDir(): string | undefined {
  try {
    return path.dirname(require.resolve("sherpa-onnx-node/package.json"));
  } catch {
    return undefined;
  }
}

/** Cheap: are the native modules where they should be? Loads nothing. */
export function nativeModuleProblems(): string[] {
  const problems: string[] = [];
  const addon = smartWhisperAddonPath();
  if (!addon) problems.push("the npm package smart-whisper is not installed (run `npm install`)");
  else if (!existsSync(addon)) problems.push(`smart-whisper is installed but not compiled (${addon} is missing)`);
  if (!sherpaPackageDir()) problems.push("the npm package sherpa-onnx-node is not installed (run `npm install`)");
  return problems;
}

let whisperAddon: SmartWhisperAddon | undefined;

export function loadSmartWhisper(): SmartWhisperAddon {
  if (whisperAddon) return whisperAddon;
  const file = smartWhisperAddonPath();
  if (!file) throw nativeError(`The npm package smart-whisper is not installed. Run \`npm install\`.`);
  if (!existsSync(file))
    throw nativeError(
      `smart-whisper is installed but whisper.cpp was not compiled (${file} is missing). ${SMART_WHISPER_ADVICE}`,
    );
  try {
    whisperAddon = require(file) as SmartWhisperAddon;
  } catch (error) {
    throw nativeError(
      `smart-whisper's native addon could not be loaded: ${(error as Error).message}. ${SMART_WHISPER_ADVICE}`,
      error,
    );
  }
  return whisperAddon;
}

let sherpa: { module: SherpaOnnx; addon: SherpaAddon } | undefined;

export function loadSherpaOnnx(): { module: SherpaOnnx; addon: SherpaAddon } {
  if (sherpa) return sherpa;
  try {
    const module = require("sherpa-onnx-node") as SherpaOnnx;
    const addon = require("sherpa-onnx-node/addon.js") as SherpaAddon;
    sherpa = { module, addon };
    return sherpa;
  } catch (error) {
    throw nativeError(
      `sherpa-onnx-node could not be loaded: ${(error as Error).message.split("\n")[0]}. Run \`npm install\` ` +
        "(it brings a prebuilt library for linux-x64, linux-arm64, macOS and Windows), or choose another SPEECH_ENGINE.",
      error,
    );
  }
}

// ---- Loading model files in a child process first ------------------------------------------------------

export type ProbeKind = "whisper" | "vad" | "diarization";

/** A line the probe writes before loading each model of several, so a crash can be blamed on the right file. */
const PROBE_STEP = "@probe-step ";

// CommonJS run with `node -e`: loads the model the way the engine will, and exits 0 only if that worked.
const PROBE_SOURCE = `
const [kind, mod, ...files] = process.argv.slice(1);
(async () => {
  const m = require(mod);
  if (kind === "whisper") {
    const model = await m.WhisperModel.load(files[0], false);
    await model.free();
  } else if (kind === "vad") {
    new m.Vad({ sileroVad: { model: files[0], threshold: 0.5, minSilenceDuration: 0.5, minSpeechDuration: 0.25,
      windowSize: 512, maxSpeechDuration: 20 }, sampleRate: 16000, numThreads: 1, debug: 0 }, 1);
  } else {
    // files[0] is the engine's own diarization config (JSON). The embedding model first, on its own, then the
    // whole pipeline: a crash after a step line is that model's. Each is also run once, since a model with
    // the right metadata but the wrong inputs only fails when it computes.
    const config = JSON.parse(files[0]);
    const step = (name) => process.stderr.write("\\n${PROBE_STEP}" + name + "\\n");
    step("embedding");
    const extractor = new m.SpeakerEmbeddingExtractor(config.embedding);
    const stream = extractor.createStream();
    const noise = new Float32Array(16000);
    let x = 12345;
    for (let i = 0; i < noise.length; i++) { x = (x * 1103515245 + 12345) & 0x7fffffff; noise[i] = x / 0x7fffffff * 0.2 - 0.1; }
    stream.acceptWaveform({ sampleRate: 16000, samples: noise });
    stream.inputFinished();
    extractor.compute(stream);
    step("segmentation");
    const diarization = new m.OfflineSpeakerDiarization(config);
    if (diarization.sampleRate !== 16000)
      throw new Error("it expects " + diarization.sampleRate + " Hz audio; the engine gives 16000 Hz");
    diarization.process(new Float32Array(2 * 16000));
  }
  process.exit(0);
})().catch((error) => {
  process.stderr.write(String((error && error.message) || error));
  process.exit(3);
});
`;

const PROBE_TIMEOUT_MS = 120_000;
/** The lines of a failed check that say what went wrong. */
const TELLING_LINE = /error|fail|invalid|what\(\)|terminate|wrong|unknown|not /i;
const probes = new Map<string, Promise<ProbeFailure | undefined>>();

type ProbeFailure = { reason: string; step?: string };

async function runProbe(kind: ProbeKind, modulePath: string, files: string[]): Promise<ProbeFailure | undefined> {
  const failure = await runProbeProcess(PROBE_SOURCE, [kind, modulePath, ...files], PROBE_TIMEOUT_MS);
  if (!failure) return undefined;
  if (failure.stderr === undefined) return { reason: failure.why };
  const lines = failure.stderr.split("\n");
  const steps = lines.filter((l) => l.startsWith(PROBE_STEP));
  const step = steps.length ? steps[steps.length - 1].slice(PROBE_STEP.length).trim() : undefined;
  const said = probeSaid(lines.filter((l) => !l.startsWith(PROBE_STEP)).join("\n"), TELLING_LINE);
  return { reason: probeReason(failure.why, said), step };
}

/**
 * Loads the model files of `kind` once in a child process. Resolves to undefined when they load, else to the
 * reason. Remembered per file, size and modification time, so a replaced file is checked again.
 */
export async function probeModels(
  kind: Exclude<ProbeKind, "diarization">,
  files: string[],
): Promise<string | undefined> {
  return (await probe(kind, files, files))?.reason;
}

async function probe(kind: ProbeKind, files: string[], args: string[]): Promise<ProbeFailure | undefined> {
  const stamped = await filesStamp(files);
  if ("unreadable" in stamped) return { reason: stamped.unreadable };
  const key = [kind, ...args, stamped.stamp].join("|");
  let result = probes.get(key);
  if (!result) {
    const modulePath = kind === "whisper" ? smartWhisperAddonPath() : require.resolve("sherpa-onnx-node");
    if (!modulePath) return { reason: "smart-whisper is not installed" };
    result = runProbe(kind, modulePath, args);
    probes.set(key, result);
  }
  return result;
}

/**
 * Loads and runs the speaker models in a child process with exactly the configuration the engine will use
 * (threads, clustering and all): the embedding model alone on a second of noise, then the whole diarization on
 * two seconds of silence. Resolves to undefined when both work, else to the reason and which model failed
 * (undefined when the check could not tell). Remembered like `probeModels`.
 */
export async function probeDiarization(
  config: SherpaDiarizationConfig,
): Promise<{ reason: string; model?: "segmentation" | "embedding" } | undefined> {
  const files = [config.segmentation.pyannote.model, config.embedding.model];
  const failure = await probe("diarization", files, [JSON.stringify(config)]);
  if (!failure) return undefined;
  const model = failure.step === "segmentation" || failure.step === "embedding" ? failure.step : undefined;
  return { reason: failure.reason, model };
}
