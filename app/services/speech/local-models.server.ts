import { constants } from "node:fs";
import { access, open, stat } from "node:fs/promises";
import { verificationProblem } from "../model-store/verify.server";
import { SpeechEngineError } from "./types";

// The local engine's model files (ADR 0011): which files a configuration needs, and a cheap check of each
// (present, readable, starting the way its format does) that loads nothing — what /api/health and the
// engine's first use rely on before any native code touches a file.

export type LocalSpeechConfig = {
  /** Where the lock file of pins lives (model-store/hub-pin.server.ts); without it unpinned files are pinned in memory. */
  modelsDir?: string;
  whisperModel: string;
  /**
   * Parakeet-TDT's files (LOCAL_RECOGNISER=parakeet, the default from configuration): when set they recognise the
   * speech through sherpa-onnx instead of whisper.cpp (local-recogniser.server.ts), and whisperModel is not used.
   */
  parakeet?: { encoder: string; decoder: string; joiner: string; tokens: string };
  vadModel: string;
  segmentationModel?: string;
  embeddingModel?: string;
  threads: number;
};

const GGML_MAGIC = 0x67676d6c; // "lmgg" on disk: whisper.cpp's model files
const ONNX_FIRST_BYTE = 0x08; // protobuf field 1 (ir_version), varint: how every ONNX model file starts

type ModelFile = { role: string; variable: string; file: string; kind: "ggml" | "onnx" | "text" };

function recogniserFiles(config: LocalSpeechConfig): ModelFile[] {
  const p = config.parakeet;
  if (!p) return [{ role: "whisper model", variable: "LOCAL_WHISPER_MODEL", file: config.whisperModel, kind: "ggml" }];
  return [
    { role: "Parakeet encoder", variable: "LOCAL_PARAKEET_MODEL", file: p.encoder, kind: "onnx" },
    { role: "Parakeet decoder", variable: "LOCAL_PARAKEET_MODEL", file: p.decoder, kind: "onnx" },
    { role: "Parakeet joiner", variable: "LOCAL_PARAKEET_MODEL", file: p.joiner, kind: "onnx" },
    { role: "Parakeet tokens", variable: "LOCAL_PARAKEET_MODEL", file: p.tokens, kind: "text" },
  ];
}

function modelFiles(config: LocalSpeechConfig): ModelFile[] {
  const files: ModelFile[] = [
    ...recogniserFiles(config),
    { role: "VAD model", variable: "LOCAL_VAD_MODEL", file: config.vadModel, kind: "onnx" },
  ];
  if (config.segmentationModel)
    files.push({
      role: "speaker segmentation model",
      variable: "LOCAL_SEGMENTATION_MODEL",
      file: config.segmentationModel,
      kind: "onnx",
    });
  if (config.embeddingModel)
    files.push({
      role: "speaker embedding model",
      variable: "LOCAL_SPEAKER_EMBEDDING_MODEL",
      file: config.embeddingModel,
      kind: "onnx",
    });
  return files;
}

/** Present, readable, not empty, and starting the way its format does. Reads 4 bytes; loads nothing. */
export async function fileProblem(model: ModelFile): Promise<string | undefined> {
  const where = `${model.role} ${model.file} (${model.variable})`;
  try {
    const info = await stat(model.file);
    if (!info.isFile()) return `${where} is not a file`;
    if (info.size < 4) return `${where} is empty`;
    await access(model.file, constants.R_OK);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? `${where} is missing` : `${where} is not readable`;
  }
  const handle = await open(model.file, "r");
  try {
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (model.kind === "ggml" && head.readUInt32LE(0) !== GGML_MAGIC)
      return `${where} is not a whisper.cpp (ggml) model`;
    if (model.kind === "onnx" && head[0] !== ONNX_FIRST_BYTE) return `${where} is not an ONNX model`;
  } finally {
    await handle.close();
  }
  return undefined;
}

export async function modelProblems(config: LocalSpeechConfig): Promise<string[]> {
  const problems = await Promise.all(modelFiles(config).map(fileProblem));
  return problems.filter((p): p is string => p !== undefined);
}

/**
 * modelProblems, and then each file against its pinned SHA-256 (issue 21): what must hold before native code loads
 * a model. Hashing happens once per file and process (verify.server.ts).
 */
export async function loadableModelProblems(config: LocalSpeechConfig): Promise<string[]> {
  const problems = await modelProblems(config);
  if (problems.length) return problems;
  const unverified = await Promise.all(modelFiles(config).map((m) => verificationProblem(m.file, config.modelsDir)));
  return unverified.filter((p): p is string => p !== undefined);
}

export const MODELS_ADVICE =
  "The app downloads the default models into MODELS_DIR on start (unless MODELS_AUTO_DOWNLOAD=0); `npm run models` " +
  "does it ahead of time, `npm run models -- --from DIR` copies them from a share. Or set LOCAL_WHISPER_MODEL, " +
  'LOCAL_VAD_MODEL, LOCAL_SEGMENTATION_MODEL and LOCAL_SPEAKER_EMBEDDING_MODEL to other files ("none" for either ' +
  "speaker model turns speaker separation off).";

export function modelsError(problems: string[]) {
  return new SpeechEngineError(
    "not_configured",
    `The local speech engine cannot use its models: ${problems.join("; ")}. ${MODELS_ADVICE}`,
    { userMessageKey: "transcriptions:errors.modelsMissing" },
  );
}

export function diarizationEnabled(config: LocalSpeechConfig) {
  return Boolean(config.segmentationModel && config.embeddingModel);
}
