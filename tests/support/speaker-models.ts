import { writeFile } from "node:fs/promises";
import path from "node:path";

import { onnxModel, type OnnxNode } from "./onnx-writer";

// Test-built speaker models for the local engine's diarization (sherpa-onnx offline speaker diarization,
// ADR 0011). No real speaker model can be downloaded on these machines (neither pyannote segmentation-3.0 nor
// 3D-Speaker ERes2Net), so the tests build two tiny ONNX models that sherpa-onnx-node 1.13.8 loads and runs
// through the same code as the real ones. They carry the metadata and tensor shapes sherpa-onnx's loaders
// read (sherpa-onnx/csrc/offline-speaker-segmentation-pyannote-model.cc, speaker-embedding-extractor-model.cc,
// speaker-embedding-extractor-general-impl.h, offline-speaker-diarization-pyannote-impl.h), but what they compute
// is hand-made and only good for the tests' synthetic voices:
//
// - segmentation: input `x` (1, 1, window) of samples; output `y` (1, frames, 7) of powerset scores, one frame
//   per receptive field. A frame whose mean energy is above a threshold scores "speaker 1 alone", else
//   "nobody": one local speaker wherever there is sound. The window is 1 s (pyannote's is 10 s), so a window
//   never holds two turns separated by a pause of more than a second, and each (window, speaker) embedding
//   hears one voice — pyannote's network would tell the voices apart inside a window instead.
// - embedding: input `x` (1, frames, 80) of log-mel filterbank energies (sherpa-onnx computes them); output
//   (1, 2). It compares the energy of the mel bins around a low voice's fundamental (about 70–140 Hz) with
//   those around a high voice's (about 190–300 Hz), summed over all frames (so loud, voiced frames count and
//   silence does not), and maps that log ratio through two opposite sigmoids: a low voice gives about (1, 0),
//   a high voice about (0, 1) — cosine similarity near 0 between the voices and near 1 within one.
//
// The ONNX bytes come from tests/support/onnx-writer.ts.

// ---- The segmentation model -----------------------------------------------------------------------------

/** pyannote segmentation-3.0's powerset: 3 local speakers, at most 2 at once → 7 classes (nobody, 3 single, 3 pairs). */
const NUM_SPEAKERS = 3;
const POWERSET_MAX_CLASSES = 2;
const NUM_CLASSES = 7;

export const TEST_SEGMENTATION = {
  sampleRate: 16_000,
  /** Samples per model call (sherpa-onnx steps by a tenth of it). */
  windowSize: 16_000,
  /** Samples per output frame, and the step between frames (40 ms every 10 ms). */
  receptiveFieldSize: 640,
  receptiveFieldShift: 160,
  /** Mean energy (samples in [-1, 1]) above which a frame is "someone speaking": -45 dBFS. */
  energyThreshold: 10 ** (-45 / 10),
};

/** An ONNX node; its inputs and outputs are named tensors of the graph. */
function node(op: string, inputs: string[], outputs: string[], attributes?: OnnxNode["attributes"]): OnnxNode {
  return { op, inputs, outputs, attributes };
}

const float = (name: string, dims: number[], values: number[]) => ({ name, type: "float" as const, dims, values });

/** The default domain's opset 17: ReduceSum takes its axes as an input (13+), ReduceLogSumExp as an attribute. */
const OPSET = 17;

/** The segmentation model's bytes (see the top of this file). */
export function segmentationModelBytes(options: Partial<typeof TEST_SEGMENTATION> = {}): Uint8Array {
  const o = { ...TEST_SEGMENTATION, ...options };
  // Class scores: nobody 0, "local speaker 1 alone" log(energy / threshold), everything else never.
  const slope = [0, 1, 0, 0, 0, 0, 0];
  const offset = [0, -Math.log(o.energyThreshold), -1e4, -1e4, -1e4, -1e4, -1e4];
  return onnxModel({
    opset: OPSET,
    graph: {
      name: "skribent-test-segmentation",
      inputs: [{ name: "x", type: "float", shape: ["N", 1, "T"] }],
      outputs: [{ name: "y", type: "float", shape: ["N", "F", NUM_CLASSES] }],
      initializers: [
        float("eps", [], [1e-10]),
        float("slope", [NUM_CLASSES], slope),
        float("offset", [NUM_CLASSES], offset),
      ],
      nodes: [
        node("Mul", ["x", "x"], ["power"]),
        node("AveragePool", ["power"], ["frame_power"], {
          kernel_shape: { ints: [o.receptiveFieldSize] },
          strides: { ints: [o.receptiveFieldShift] },
        }),
        node("Add", ["frame_power", "eps"], ["frame_power_eps"]),
        node("Log", ["frame_power_eps"], ["log_power"]), // (N, 1, F)
        node("Transpose", ["log_power"], ["log_power_t"], { perm: { ints: [0, 2, 1] } }), // (N, F, 1)
        node("Mul", ["log_power_t", "slope"], ["scaled"]),
        node("Add", ["scaled", "offset"], ["y"]),
      ],
    },
    metadata: {
      model_type: "pyannote-segmentation-3.0",
      sample_rate: o.sampleRate,
      window_size: o.windowSize,
      window_shift: Math.round(o.windowSize / 10), // sherpa-onnx 1.13.8 derives it (0.1 × window) and ignores this
      receptive_field_size: o.receptiveFieldSize,
      receptive_field_shift: o.receptiveFieldShift,
      num_speakers: NUM_SPEAKERS,
      powerset_max_classes: POWERSET_MAX_CLASSES,
      num_classes: NUM_CLASSES,
    },
  });
}

// ---- The embedding model --------------------------------------------------------------------------------

/** sherpa-onnx's filterbank (kaldi-native-fbank defaults): 80 mel bins from 20 Hz to 7600 Hz. */
const MEL_BINS = 80;
const LOW_FREQ = 20;
const HIGH_FREQ = 8000 - 400;

const mel = (hz: number) => 1127 * Math.log(1 + hz / 700);

/** Centre frequency of each of the filterbank's mel bins, in Hz. */
export function melBinCentres(): number[] {
  const low = mel(LOW_FREQ);
  const step = (mel(HIGH_FREQ) - low) / (MEL_BINS + 1);
  return Array.from({ length: MEL_BINS }, (_, i) => 700 * (Math.exp((low + (i + 1) * step) / 1127) - 1));
}

export const TEST_EMBEDDING = {
  /** Hz: the band around a low voice's fundamental… */
  lowBand: [70, 140] as [number, number],
  /** …and around a high voice's. */
  highBand: [190, 300] as [number, number],
  /**
   * log(low band energy / high band energy) at which the embedding is halfway between the voices. Measured on
   * 1-second windows of espeak-ng's de+m3 at pitch 20 (-3.5 to -2.1) and de+f4 at pitch 80 (-7.5 to -6.1).
   */
  centre: -4.8,
  /** Steepness of the sigmoids (per unit of log ratio). */
  steepness: 4,
};

/**
 * The embedding model's bytes (see the top of this file). `metadata` overrides or adds metadata entries (to
 * make a model sherpa-onnx refuses). `diagnostic` makes a model whose 80 outputs are the log of each mel bin's
 * energy summed over time: how the bands and the centre above were chosen, should espeak-ng's voices change.
 */
export function embeddingModelBytes(
  options: Partial<typeof TEST_EMBEDDING> & { diagnostic?: boolean; metadata?: Record<string, string | number> } = {},
): Uint8Array {
  const o = { ...TEST_EMBEDDING, ...options };
  const centres = melBinCentres();
  const inBand = ([from, to]: [number, number]) => centres.map((c) => (c >= from && c <= to ? 1 : 0));
  const low = inBand(o.lowBand);
  const high = inBand(o.highBand);
  if (!low.includes(1) || !high.includes(1)) throw new Error("speaker-models: a band holds no mel bin");
  // (80, 2): column 0 sums the low band's bins, column 1 the high band's (row-major).
  const bands = centres.flatMap((_, i) => [low[i], high[i]]);
  const metadata = {
    framework: "3d-speaker",
    sample_rate: 16_000,
    output_dim: o.diagnostic ? MEL_BINS : 2,
    normalize_samples: 1, // samples in [-1, 1], as for 3D-Speaker
    language: "German",
    // No feature_normalize_type: 3D-Speaker's "global-mean" would subtract each bin's mean over time, which is
    // exactly the information this model uses.
    comment: "test-built by tests/support/speaker-models.ts; not a speaker model",
    ...o.metadata,
  };
  const input = { name: "x", type: "float" as const, shape: ["N", "T", MEL_BINS] };
  const output = (dim: number) => ({ name: "embedding", type: "float" as const, shape: ["N", dim] });
  if (o.diagnostic)
    return onnxModel({
      opset: OPSET,
      graph: {
        name: "skribent-test-embedding-diagnostic",
        inputs: [input],
        outputs: [output(MEL_BINS)],
        nodes: [node("ReduceLogSumExp", ["x"], ["embedding"], { axes: { ints: [1] }, keepdims: { int: 0 } })],
      },
      metadata,
    });
  return onnxModel({
    opset: OPSET,
    graph: {
      name: "skribent-test-embedding",
      inputs: [input],
      outputs: [output(2)],
      initializers: [
        float("bands", [MEL_BINS, 2], bands),
        { name: "time_axis", type: "int64", dims: [1], values: [1] },
        float("eps", [], [1e-20]),
        float("contrast", [2, 1], [o.steepness, -o.steepness]),
        float("shift", [], [-o.steepness * o.centre]),
      ],
      nodes: [
        node("Exp", ["x"], ["energy"]), // (N, T, 80): mel energies
        node("MatMul", ["energy", "bands"], ["band_energy"]), // (N, T, 2)
        node("ReduceSum", ["band_energy", "time_axis"], ["total"], { keepdims: { int: 0 } }), // (N, 2)
        node("Add", ["total", "eps"], ["total_eps"]),
        node("Log", ["total_eps"], ["log_total"]),
        node("MatMul", ["log_total", "contrast"], ["ratio"]), // (N, 1): steepness × log(low / high)
        node("Add", ["ratio", "shift"], ["z"]),
        node("Neg", ["z"], ["minus_z"]),
        node("Sigmoid", ["z"], ["is_low"]),
        node("Sigmoid", ["minus_z"], ["is_high"]),
        node("Concat", ["is_low", "is_high"], ["embedding"], { axis: { int: 1 } }),
      ],
    },
    metadata,
  });
}

/** Writes both models into `dir`; returns their paths. */
export async function writeSpeakerModels(dir: string): Promise<{ segmentation: string; embedding: string }> {
  const segmentation = path.join(dir, "test-segmentation.onnx");
  const embedding = path.join(dir, "test-speaker-embedding.onnx");
  await writeFile(segmentation, segmentationModelBytes());
  await writeFile(embedding, embeddingModelBytes());
  return { segmentation, embedding };
}
