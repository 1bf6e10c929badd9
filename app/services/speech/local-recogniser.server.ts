import type { LocalSpeechConfig } from "./local-models.server";
import { loadSherpaOnnx, loadSmartWhisper, nativeModuleProblems, NATIVE_ADVICE } from "./local-native.server";
import { parakeetWorker } from "./local-parakeet.server";
import { whisperWorker, type WhisperWorker } from "./local-whisper.server";

// Which recogniser the local engine runs (issue 21, ADR 0027): Parakeet-TDT-0.6B-v3 through sherpa-onnx — prebuilt,
// nothing compiled at `npm install` — when its files are configured (the default), else whisper.cpp through
// smart-whisper, an optional dependency that compiles at install where a compiler exists. Both workers have one shape
// (recognise a window of 16 kHz PCM into words timed in the file), so the batch and the live engine do not care.

export type Recogniser = {
  name: "parakeet" | "whisper";
  worker: WhisperWorker;
  /** Loads the native module now, so a missing one fails a job before the VAD pass (throws not_configured). */
  ensureNative(): void;
};

export function recogniserFor(config: LocalSpeechConfig, options: { idleUnloadMs?: number } = {}): Recogniser {
  if (config.parakeet)
    return {
      name: "parakeet",
      worker: parakeetWorker({ ...config.parakeet, threads: config.threads }, options),
      ensureNative: () => void loadSherpaOnnx(),
    };
  return { name: "whisper", worker: whisperWorker(config, options), ensureNative: () => void loadSmartWhisper() };
}

/** The native modules this configuration needs, cheaply (loads nothing): for health checks. */
export function recogniserNativeProblems(config: LocalSpeechConfig): { problems: string[]; advice: string } {
  const problems = nativeModuleProblems().filter((p) => !config.parakeet || !p.includes("smart-whisper"));
  return { problems, advice: NATIVE_ADVICE };
}
