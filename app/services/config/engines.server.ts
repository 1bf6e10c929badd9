import path from "node:path";
import { z } from "zod";
import { bool, optionalUrl } from "./values.server";
import { DEFAULT_MODEL_FILES, parakeetFiles } from "../model-store/catalogue";
import { parseModelSetting, type ModelSetting } from "../model-store/hub-pin.server";

/** The speech, live and language engines' settings, and where their models come from. */
export const engineEnvShape = {
  SPEECH_ENGINE: z.enum(["local", "speechmatics", "openai"]).default("local"),
  SPEECHMATICS_API_KEY: z.string().min(1).optional(),
  SPEECHMATICS_BATCH_URL: z.string().url().default("https://eu1.asr.api.speechmatics.com/v2"),
  OPENAI_TRANSCRIBE_URL: optionalUrl,
  OPENAI_TRANSCRIBE_API_KEY: z.string().min(1).optional(),
  OPENAI_TRANSCRIBE_MODEL: z.string().min(1).default("whisper-1"),
  // Unset: DATA_DIR/models. The default models download there on first start (model-store/, ADR 0027).
  MODELS_DIR: z.string().min(1).optional(),
  MODELS_URL: optionalUrl,
  MODELS_HUB_URL: z.string().url().default("https://huggingface.co"),
  MODELS_AUTO_DOWNLOAD: bool.default("true"),
  // A failed model download is tried again after 2 s, doubling up to this.
  MODELS_RETRY_MAX_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  // Parakeet-TDT through sherpa-onnx (prebuilt), or whisper.cpp through smart-whisper (compiled at install).
  LOCAL_RECOGNISER: z.enum(["parakeet", "whisper"]).default(DEFAULT_MODEL_FILES.recogniser),
  LOCAL_PARAKEET_MODEL: z
    .string()
    .regex(
      /^[\w.-]+$|^\/.+|^hf:[\w.-]+\/[\w.-]+(@[\w.-]+)?\/[\w./-]+$/,
      "a file name prefix in MODELS_DIR, an absolute path prefix, or hf:owner/repo[@revision]/prefix",
    )
    .default(DEFAULT_MODEL_FILES.parakeet),
  LOCAL_WHISPER_MODEL: z.string().min(1).default(DEFAULT_MODEL_FILES.whisper),
  LOCAL_VAD_MODEL: z.string().min(1).default(DEFAULT_MODEL_FILES.vad),
  // "none" (either one) turns speaker separation off: every word is then speaker S1.
  LOCAL_SEGMENTATION_MODEL: z.string().min(1).default(DEFAULT_MODEL_FILES.segmentation),
  LOCAL_SPEAKER_EMBEDDING_MODEL: z.string().min(1).default(DEFAULT_MODEL_FILES.embedding),
  LOCAL_THREADS: z.coerce.number().int().min(1).max(64).default(2),
  SPEECH_LIVE_ENGINE: z.enum(["local", "speechmatics"]).optional(),
  SPEECH_LIVE_MODE: z.enum(["relay", "direct"]).default("relay"),
  SPEECHMATICS_RT_URL: z.string().url().default("wss://eu.rt.speechmatics.com/v2"),
  SPEECHMATICS_MP_URL: z.string().url().default("https://mp.speechmatics.com/v1"),

  LLM_ENGINE: z.enum(["local", "openai"]).default("local"),
  LLM_OPENAI_URL: optionalUrl,
  LLM_OPENAI_API_KEY: z.string().min(1).optional(),
  LLM_OPENAI_MODEL: z.string().min(1).default("gpt-4o-mini"),
  LLM_OPENAI_STRUCTURED_OUTPUT: z.enum(["json_schema", "json_object", "none"]).default("json_schema"),
  LLM_CONTEXT_TOKENS: z.coerce.number().int().min(1024).max(1_048_576).default(8192),
  LLM_TIMEOUT_SECONDS: z.coerce.number().int().min(5).max(1800).default(120),
  LOCAL_LLM_MODEL: z.string().min(1).default(DEFAULT_MODEL_FILES.letter),
  LOCAL_LLM_THREADS: z.coerce.number().int().min(1).max(64).default(2),
};

type Env = z.output<z.ZodObject<typeof engineEnvShape>> & { DATA_DIR: string };

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
