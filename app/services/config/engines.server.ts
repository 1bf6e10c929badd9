import path from "node:path";
import type { Env } from "./config.server";
import { parakeetFiles } from "../model-store/catalogue";
import { parseModelSetting, type ModelSetting } from "../model-store/hub-pin.server";

// The engines' part of the configuration (config/config.server.ts validates the environment): which speech engine
// transcribes uploads, which answers live audio (issue 7), which language model writes letters, and each one's
// settings, with model files resolved against MODELS_DIR.

/** The live engine: named, or Speechmatics when batch uses Speechmatics, else the embedded engine. */
export function liveEngineOf(env: { SPEECH_LIVE_ENGINE?: "local" | "speechmatics"; SPEECH_ENGINE: string }) {
  return env.SPEECH_LIVE_ENGINE ?? (env.SPEECH_ENGINE === "speechmatics" ? "speechmatics" : "local");
}

/** What the engines' settings lack, as [variable, problem] pairs for the configuration check. */
export function engineIssues(env: Env): Array<[string, string]> {
  const issues: Array<[string, string]> = [];
  if (env.SPEECH_ENGINE === "speechmatics" && !env.SPEECHMATICS_API_KEY)
    issues.push(["SPEECHMATICS_API_KEY", "is required when SPEECH_ENGINE=speechmatics"]);
  if (liveEngineOf(env) === "speechmatics" && !env.SPEECHMATICS_API_KEY)
    issues.push(["SPEECHMATICS_API_KEY", "is required when SPEECH_LIVE_ENGINE=speechmatics"]);
  // The browser can talk directly only to Speechmatics; the embedded engine is reached through the server.
  if (env.SPEECH_LIVE_MODE === "direct" && liveEngineOf(env) !== "speechmatics")
    issues.push(["SPEECH_LIVE_MODE", "direct needs SPEECH_LIVE_ENGINE=speechmatics"]);
  if (env.SPEECH_ENGINE === "openai" && !env.OPENAI_TRANSCRIBE_URL)
    issues.push(["OPENAI_TRANSCRIBE_URL", "is required when SPEECH_ENGINE=openai"]);
  if (env.LLM_ENGINE === "openai" && !env.LLM_OPENAI_URL)
    issues.push(["LLM_OPENAI_URL", "is required when LLM_ENGINE=openai"]);
  for (const variable of MODEL_VARIABLES) {
    try {
      parseModelSetting(env[variable], "/");
    } catch (error) {
      issues.push([variable, (error as Error).message]);
    }
  }
  return issues;
}

const MODEL_VARIABLES = [
  "LOCAL_WHISPER_MODEL",
  "LOCAL_VAD_MODEL",
  "LOCAL_SEGMENTATION_MODEL",
  "LOCAL_SPEAKER_EMBEDDING_MODEL",
  "LOCAL_LLM_MODEL",
] as const;

/** MODELS_DIR, else DATA_DIR/models. */
export function modelsDirOf(env: Pick<Env, "MODELS_DIR" | "DATA_DIR">) {
  return path.resolve(env.MODELS_DIR ?? path.join(env.DATA_DIR, "models"));
}

/** Speaker separation is on unless either of its models is set to "none". */
function speakerModels(env: Env) {
  const off = env.LOCAL_SEGMENTATION_MODEL === "none" || env.LOCAL_SPEAKER_EMBEDDING_MODEL === "none";
  return off ? undefined : { segmentation: env.LOCAL_SEGMENTATION_MODEL, embedding: env.LOCAL_SPEAKER_EMBEDDING_MODEL };
}

/** A model file the configured engines need, for the downloader (model-store/downloads.server.ts). */
export type NeededModel = { role: "speech" | "vad" | "segmentation" | "embedding" | "letter"; setting: ModelSetting };

/** Where models live, where they come from, and which ones the engines chosen here need. */
export function modelsConfig(env: Env) {
  const dir = modelsDirOf(env);
  const needed: NeededModel[] = [];
  const localSpeech = env.SPEECH_ENGINE === "local" || liveEngineOf(env) === "local";
  if (localSpeech) {
    needed.push({ role: "vad", setting: parseModelSetting(env.LOCAL_VAD_MODEL, dir) });
    const speakers = speakerModels(env);
    if (speakers && env.SPEECH_ENGINE === "local") {
      needed.push({ role: "segmentation", setting: parseModelSetting(speakers.segmentation, dir) });
      needed.push({ role: "embedding", setting: parseModelSetting(speakers.embedding, dir) });
    }
    if (env.LOCAL_RECOGNISER === "parakeet")
      for (const file of Object.values(parakeetFiles(env.LOCAL_PARAKEET_MODEL)))
        needed.push({ role: "speech", setting: parseModelSetting(file, dir) });
    else needed.push({ role: "speech", setting: parseModelSetting(env.LOCAL_WHISPER_MODEL, dir) });
  }
  if (env.LLM_ENGINE === "local") needed.push({ role: "letter", setting: parseModelSetting(env.LOCAL_LLM_MODEL, dir) });
  return {
    dir,
    mirrorUrl: env.MODELS_URL?.replace(/\/$/, ""),
    hubUrl: env.MODELS_HUB_URL.replace(/\/$/, ""),
    autoDownload: env.MODELS_AUTO_DOWNLOAD,
    retryMaxMs: env.MODELS_RETRY_MAX_SECONDS * 1000,
    needed,
  };
}

export function speechConfig(env: Env) {
  const modelsDir = modelsDirOf(env);
  const model = (name: string | undefined) => (name ? parseModelSetting(name, modelsDir).file : undefined);
  const speakers = speakerModels(env);
  return {
    engine: env.SPEECH_ENGINE,
    speechmatics: {
      apiKey: env.SPEECHMATICS_API_KEY,
      batchUrl: env.SPEECHMATICS_BATCH_URL.replace(/\/$/, ""),
      realtimeUrl: env.SPEECHMATICS_RT_URL.replace(/\/$/, ""),
      managementUrl: env.SPEECHMATICS_MP_URL.replace(/\/$/, ""),
    },
    /**
     * Live recording and dictation (issue 7, ADR 0013): which engine answers, and whether the browser's audio
     * goes through Skribent (relay) or straight to Speechmatics with a short-lived key (direct).
     */
    live: { engine: liveEngineOf(env), mode: env.SPEECH_LIVE_MODE },
    openai: {
      baseUrl: env.OPENAI_TRANSCRIBE_URL?.replace(/\/$/, ""),
      apiKey: env.OPENAI_TRANSCRIBE_API_KEY,
      model: env.OPENAI_TRANSCRIBE_MODEL,
    },
    local: {
      modelsDir,
      whisperModel: model(env.LOCAL_WHISPER_MODEL)!,
      parakeet:
        env.LOCAL_RECOGNISER === "parakeet"
          ? (Object.fromEntries(
              Object.entries(parakeetFiles(env.LOCAL_PARAKEET_MODEL)).map(([part, file]) => [part, model(file)!]),
            ) as ReturnType<typeof parakeetFiles>)
          : undefined,
      vadModel: model(env.LOCAL_VAD_MODEL)!,
      segmentationModel: model(speakers?.segmentation),
      embeddingModel: model(speakers?.embedding),
      threads: env.LOCAL_THREADS,
    },
  };
}

export function llmConfig(env: Env) {
  const modelsDir = modelsDirOf(env);
  return {
    engine: env.LLM_ENGINE,
    contextTokens: env.LLM_CONTEXT_TOKENS,
    timeoutMs: env.LLM_TIMEOUT_SECONDS * 1000,
    openai: {
      baseUrl: env.LLM_OPENAI_URL?.replace(/\/$/, ""),
      apiKey: env.LLM_OPENAI_API_KEY,
      model: env.LLM_OPENAI_MODEL,
      structuredOutput: env.LLM_OPENAI_STRUCTURED_OUTPUT,
    },
    local: {
      modelsDir,
      model: parseModelSetting(env.LOCAL_LLM_MODEL, modelsDir).file,
      threads: env.LOCAL_LLM_THREADS,
    },
  };
}
