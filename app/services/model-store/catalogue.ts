// The model files Skribent knows by name (issue 21, ADR 0027): where each is published, its SHA-256 and its size.
// A file is only ever loaded after its bytes matched these (or, for a file the operator names that is not listed
// here, the pin recorded in the models directory's lock file: hub-pin.server.ts). A wrong pin can only make a
// download fail, never load a different file.
//
// Sources of the pins: the whisper.cpp sizes and hashes are the Git LFS objects of huggingface.co/ggerganov/whisper.cpp;
// Silero VAD is the file of snakers4/silero-vad at tag v6.2.1 (the same bytes as ../shared/models/silero_vad.onnx);
// the speaker models are sherpa-onnx's exports (pyannote segmentation-3.0 as csukuangfj publishes it on the hub, the
// 3D-Speaker ERes2Net embedding from sherpa-onnx's "speaker-recongition-models" release — sic); the GGUF letter
// models are unsloth's quantisations, with the hashes listed in LocalAI's model gallery and the sizes as several
// independent projects pin them. Each was found identical in at least two unrelated sources.

export type ModelRole = "speech" | "vad" | "segmentation" | "embedding" | "letter";

export type PinnedFile = {
  /** The file name in the models directory (also its name on a clinic's mirror, MODELS_URL). */
  name: string;
  role: ModelRole;
  /** The public address; undefined for the test models, which only come from a mirror or `--from`. */
  url?: string;
  sha256: string;
  size: number;
  licence: string;
  /** What an operator reads in the README, the terminal and the admin page. */
  label: string;
};

const HF = "https://huggingface.co";
/** LOCAL_PARAKEET_MODEL's default: the prefix of the four Parakeet files in the models directory. */
export const PARAKEET = "parakeet-tdt-0.6b-v3-int8";
const WHISPER = `${HF}/ggerganov/whisper.cpp/resolve/main`;

export const PINNED_FILES: readonly PinnedFile[] = [
  {
    name: "ggml-small.bin",
    role: "speech",
    url: `${WHISPER}/ggml-small.bin`,
    sha256: "1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b",
    size: 487_601_967,
    licence: "MIT",
    label: "Whisper small (whisper.cpp)",
  },
  {
    name: "ggml-base.bin",
    role: "speech",
    url: `${WHISPER}/ggml-base.bin`,
    sha256: "60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe",
    size: 147_951_465,
    licence: "MIT",
    label: "Whisper base (whisper.cpp)",
  },
  {
    name: "ggml-medium.bin",
    role: "speech",
    url: `${WHISPER}/ggml-medium.bin`,
    sha256: "6c14d5adee5f86394037b4e4e8b59f1673b6cee10e3cf0b11bbdbee79c156208",
    size: 1_533_763_059,
    licence: "MIT",
    label: "Whisper medium (whisper.cpp)",
  },
  // Parakeet-TDT-0.6B-v3 (NVIDIA, 25 European languages with German; CC-BY-4.0) as sherpa-onnx's int8 export; the
  // default recogniser (ADR 0027). Stored flat as <LOCAL_PARAKEET_MODEL>.<part> so a mirror serves plain names.
  ...(
    [
      ["encoder", "encoder.int8.onnx", "acfc2b4456377e15d04f0243af540b7fe7c992f8d898d751cf134c3a55fd2247", 652_184_281],
      ["decoder", "decoder.int8.onnx", "179e50c43d1a9de79c8a24149a2f9bac6eb5981823f2a2ed88d655b24248db4e", 11_845_275],
      ["joiner", "joiner.int8.onnx", "3164c13fc2821009440d20fcb5fdc78bff28b4db2f8d0f0b329101719c0948b3", 6_355_277],
      ["tokens", "tokens.txt", "d58544679ea4bc6ac563d1f545eb7d474bd6cfa467f0a6e2c1dc1c7d37e3c35d", 93_939],
    ] as const
  ).map(([part, file, sha256, size]): PinnedFile => ({
    name: `${PARAKEET}.${part === "tokens" ? "tokens.txt" : `${part}.onnx`}`,
    role: "speech",
    url: `${HF}/csukuangfj/sherpa-onnx-nemo-parakeet-tdt-0.6b-v3-int8/resolve/main/${file}`,
    sha256,
    size,
    licence: "CC-BY-4.0",
    label: `Parakeet-TDT-0.6B-v3 (NVIDIA), ${part}`,
  })),
  {
    name: "silero_vad.onnx",
    role: "vad",
    url: "https://github.com/snakers4/silero-vad/raw/v6.2.1/src/silero_vad/data/silero_vad.onnx",
    sha256: "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3",
    size: 2_327_524,
    licence: "MIT",
    label: "Silero VAD v6.2",
  },
  {
    name: "pyannote-segmentation-3-0.onnx",
    role: "segmentation",
    url: `${HF}/csukuangfj/sherpa-onnx-pyannote-segmentation-3-0/resolve/9403a6902bb58e3d5ae8c7e77c3422de279db2e0/model.onnx`,
    sha256: "220ad67ca923bef2fa91f2390c786097bf305bceb5e261d4af67b38e938e1079",
    size: 5_992_913,
    licence: "MIT",
    label: "pyannote segmentation 3.0 (speaker turns)",
  },
  {
    name: "3dspeaker_speech_eres2net_base_sv_zh-cn_3dspeaker_16k.onnx",
    role: "embedding",
    url:
      "https://github.com/k2-fsa/sherpa-onnx/releases/download/speaker-recongition-models/" +
      "3dspeaker_speech_eres2net_base_sv_zh-cn_3dspeaker_16k.onnx",
    sha256: "1a331345f04805badbb495c775a6ddffcdd1a732567d5ec8b3d5749e3c7a5e4b",
    size: 39_593_761,
    licence: "Apache-2.0",
    label: "3D-Speaker ERes2Net (voice fingerprints)",
  },
  {
    name: "Ministral-3-3B-Instruct-2512-Q4_K_M.gguf",
    role: "letter",
    url: `${HF}/unsloth/Ministral-3-3B-Instruct-2512-GGUF/resolve/main/Ministral-3-3B-Instruct-2512-Q4_K_M.gguf`,
    sha256: "fd46fc371ff0509bfa8657ac956b7de8534d7d9baaa4947975c0648c3aa397f4",
    size: 2_146_497_824,
    licence: "Apache-2.0",
    label: "Ministral 3 3B Instruct (Mistral AI), Q4_K_M",
  },
  {
    name: "Qwen3-4B-Q4_K_M.gguf",
    role: "letter",
    url: `${HF}/unsloth/Qwen3-4B-GGUF/resolve/22c9fc8a8c7700b76a1789366280a6a5a1ad1120/Qwen3-4B-Q4_K_M.gguf`,
    sha256: "f6f851777709861056efcdad3af01da38b31223a3ba26e61a4f8bf3a2195813a",
    size: 2_497_281_312,
    licence: "Apache-2.0",
    label: "Qwen3 4B (Alibaba), Q4_K_M",
  },
  {
    name: "Ministral-3-8B-Instruct-2512-Q4_K_M.gguf",
    role: "letter",
    url:
      `${HF}/unsloth/Ministral-3-8B-Instruct-2512-GGUF/resolve/3731507ec3e867db16d620f73e14d689125758f4/` +
      "Ministral-3-8B-Instruct-2512-Q4_K_M.gguf",
    sha256: "5dbc3647eb563b9f8d3c70ec3d906cce84b86bb35c5e0b8a36e7df3937ab7174",
    size: 5_198_386_720,
    licence: "Apache-2.0",
    label: "Ministral 3 8B Instruct (Mistral AI), Q4_K_M",
  },
  // The small models of ../shared/models, on which the test suite runs: no public address here, so they come only
  // from a mirror (MODELS_URL) or `npm run models -- --from DIR`, verified like any other.
  {
    name: "for-tests-ggml-tiny.bin",
    role: "speech",
    sha256: "c486fb9f14a28b1c1dc252741a431646cc573450c900b9d9c406e10294aa01e6",
    size: 575_451,
    licence: "MIT",
    label: "whisper.cpp tiny without weights (tests only)",
  },
  {
    name: "stories260K.gguf",
    role: "letter",
    sha256: "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d",
    size: 1_185_376,
    licence: "MIT",
    label: "stories260K, not instruction-tuned (tests only)",
  },
];

/**
 * The letter models on offer (LOCAL_LLM_MODEL names the file): a fast default and a stronger one for bigger servers
 * (ADR 0027 has the reasons). All Apache-2.0, all architectures of the llama.cpp that node-llama-cpp 3.22.1 ships.
 */
export const LETTER_MODELS = {
  default: "Ministral-3-3B-Instruct-2512-Q4_K_M.gguf",
  alternative: "Qwen3-4B-Q4_K_M.gguf",
  stronger: "Ministral-3-8B-Instruct-2512-Q4_K_M.gguf",
} as const;

/** The four files of a Parakeet model stored under `prefix` (LOCAL_PARAKEET_MODEL). */
export function parakeetFiles(prefix: string) {
  return {
    encoder: `${prefix}.encoder.onnx`,
    decoder: `${prefix}.decoder.onnx`,
    joiner: `${prefix}.joiner.onnx`,
    tokens: `${prefix}.tokens.txt`,
  };
}

export const DEFAULT_MODEL_FILES = {
  recogniser: "parakeet" as const,
  parakeet: PARAKEET,
  whisper: "ggml-small.bin",
  vad: "silero_vad.onnx",
  segmentation: "pyannote-segmentation-3-0.onnx",
  embedding: "3dspeaker_speech_eres2net_base_sv_zh-cn_3dspeaker_16k.onnx",
  letter: LETTER_MODELS.default,
} as const;

export function pinnedFile(name: string): PinnedFile | undefined {
  return PINNED_FILES.find((file) => file.name === name);
}
