import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { onnxModel, type OnnxNode } from "./onnx-writer";

// A tiny NeMo TDT transducer that sherpa-onnx-node 1.13.8 loads as modelType "nemo_transducer" and decodes with
// its TDT greedy search, built inside the test: encoder.onnx, decoder.onnx, joiner.onnx and tokens.txt in the
// layout of csukuangfj/sherpa-onnx-nemo-parakeet-tdt-0.6b-v3-int8. It "recognises" a fixed script of
// SentencePiece tokens, one group of tokens at each onset of sound, so a test knows which words come out, when,
// and how sure the model is of each token.
//
// What sherpa-onnx requires (sherpa-onnx/csrc/offline-transducer-nemo-model.cc,
// offline-recognizer-transducer-nemo-impl.h, offline-transducer-greedy-search-nemo-decoder.cc):
// - encoder metadata: vocab_size (tokens without the blank), subsampling_factor, normalize_type ("" or
//   "per_feature"), pred_rnn_layers, pred_hidden; optional feat_dim (the fbank bins; Parakeet v3 uses 128) and
//   is_giga_am. tokens.txt must have vocab_size + 1 lines with <blk> last — otherwise the process exits.
// - encoder: (features (1, feat_dim, T) float, lengths (1) int64) → (encoder_out (1, D, T') float,
//   lengths (1) int64). Timestamps are encoder frames × 10 ms × subsampling_factor.
// - decoder: (targets (1, 1) int32, target_length (1) int32, h, c (pred_rnn_layers, 1, pred_hidden) float) →
//   (decoder_out (1, D', 1), length, h', c'). It is primed with <blk> and zero states, then run once per token.
// - joiner: (encoder frame (1, D, 1), decoder_out (1, D', 1)) → logits (1, 1, 1, vocab + durations). More logits
//   than tokens make it a TDT model: the first vocab_size + 1 are tokens, the rest choose how many frames to skip
//   (0…num_durations − 1). A token's log-probability is the log-softmax over the token logits only.
//
// How this model behaves:
// - Encoder: an 80 ms frame (8 fbank frames, subsampling_factor 8) is "sound" when at least half of its fbank
//   frames have a mean log-mel energy above SOUND_THRESHOLD (digital silence sits at log(FLT_EPSILON) ≈ −15.9;
//   noise at ±0.3 full scale is far above). Its single output channel is 1 at an onset (sound after no sound).
// - Decoder: its state counts the tokens emitted so far; its output is that count one-hot, the script position.
// - Joiner: at an onset it emits the script token at the position, with the logit that gives the token the
//   probability the script asks for, and that token's duration; elsewhere (and after the script) <blk>, skip 1.
//   A token with duration 0 keeps the decoder on the same frame, so the next script token follows at once — one
//   onset can emit a whole word with its punctuation (at most 5 tokens: sherpa-onnx's max_tokens_per_frame).
//
// So the test audio must put each onset on an 80 ms boundary of the recognition window (`SAMPLES_PER_FRAME`),
// with at least one silent 80 ms frame between bursts, and a token's duration must not skip past the next onset.

export const SUBSAMPLING_FACTOR = 8;
/** One encoder frame: 8 fbank frames of 10 ms. */
export const FRAME_SECONDS = 0.08;
export const SAMPLES_PER_FRAME = 1280;
const FEAT_DIM = 80;
const NUM_DURATIONS = 5;
const SOUND_THRESHOLD = -8;
/** A logit no other reaches: <blk> where nothing is to be said, the chosen duration. */
const SURE = 30;

export type ScriptToken = {
  /** As in tokens.txt: "▁" starts a word ("▁Kopf", "schmer", "zen", "."). */
  token: string;
  /** TDT duration in encoder frames (0…4); 0 emits the next script token on the same frame. */
  frames: number;
  /** The token's probability (its ys_log_prob is the log of it, up to float rounding); default 0.95. */
  p?: number;
};

export type ParakeetTestModel = { encoder: string; decoder: string; joiner: string; tokens: string };

function vocabulary(script: ScriptToken[]): string[] {
  const tokens = ["<unk>"];
  for (const { token } of script) {
    if (/\s/u.test(token) || token === "<blk>") throw new Error(`not a usable test token: ${JSON.stringify(token)}`);
    if (!tokens.includes(token)) tokens.push(token);
  }
  // An unused piece, so no token's probability is decided by the vocabulary having just its script tokens.
  tokens.push("▁und");
  return tokens;
}

function encoderModel(vocabSize: number) {
  const nodes: OnnxNode[] = [
    { op: "ReduceMean", inputs: ["audio_signal"], outputs: ["energy"], attributes: { axes: { ints: [1] } } },
    { op: "Greater", inputs: ["energy", "sound_threshold"], outputs: ["loud"] },
    { op: "Cast", inputs: ["loud"], outputs: ["loud_f"], attributes: { to: { int: 1 } } },
    {
      op: "AveragePool",
      inputs: ["loud_f"],
      outputs: ["loud_share"],
      attributes: {
        kernel_shape: { ints: [SUBSAMPLING_FACTOR] },
        strides: { ints: [SUBSAMPLING_FACTOR] },
        pads: { ints: [0, SUBSAMPLING_FACTOR - 1] },
        count_include_pad: { int: 0 },
      },
    },
    { op: "Greater", inputs: ["loud_share", "half"], outputs: ["sound_b"] },
    { op: "Cast", inputs: ["sound_b"], outputs: ["sound"], attributes: { to: { int: 1 } } },
    { op: "Slice", inputs: ["sound", "zero_i64", "minus_one_i64", "two_i64"], outputs: ["sound_but_last"] },
    {
      op: "Concat",
      inputs: ["silence_before", "sound_but_last"],
      outputs: ["previous"],
      attributes: { axis: { int: 2 } },
    },
    { op: "Sub", inputs: ["one", "previous"], outputs: ["was_quiet"] },
    { op: "Mul", inputs: ["sound", "was_quiet"], outputs: ["outputs"] },
    { op: "Add", inputs: ["length", "frames_round_up"], outputs: ["length_up"] },
    { op: "Div", inputs: ["length_up", "frames_per_output"], outputs: ["encoded_lengths"] },
  ];
  return onnxModel({
    graph: {
      name: "parakeet_test_encoder",
      nodes,
      inputs: [
        { name: "audio_signal", type: "float", shape: [1, FEAT_DIM, "T"] },
        { name: "length", type: "int64", shape: [1] },
      ],
      outputs: [
        { name: "outputs", type: "float", shape: [1, 1, "T_out"] },
        { name: "encoded_lengths", type: "int64", shape: [1] },
      ],
      initializers: [
        { name: "sound_threshold", type: "float", dims: [], values: [SOUND_THRESHOLD] },
        { name: "half", type: "float", dims: [], values: [0.5] },
        { name: "one", type: "float", dims: [], values: [1] },
        { name: "zero_i64", type: "int64", dims: [1], values: [0] },
        { name: "minus_one_i64", type: "int64", dims: [1], values: [-1] },
        { name: "two_i64", type: "int64", dims: [1], values: [2] },
        { name: "silence_before", type: "float", dims: [1, 1, 1], values: [0] },
        { name: "frames_round_up", type: "int64", dims: [], values: [SUBSAMPLING_FACTOR - 1] },
        { name: "frames_per_output", type: "int64", dims: [], values: [SUBSAMPLING_FACTOR] },
      ],
    },
    metadata: {
      // NeMo counts the tokens without <blk>; sherpa-onnx adds 1.
      vocab_size: vocabSize,
      normalize_type: "",
      pred_rnn_layers: 1,
      pred_hidden: 1,
      subsampling_factor: SUBSAMPLING_FACTOR,
      feat_dim: FEAT_DIM,
      model_type: "EncDecRNNTBPEModel",
      // sherpa-onnx takes a NeMo transducer for TDT when its url names "tdt" (as the Parakeet exports' does).
      url: "https://example.invalid/skribent-parakeet-tdt-test-model",
      comment: "Skribent test model: emits a fixed script at onsets of sound",
    },
  });
}

function decoderModel(positions: number, blankId: number) {
  return onnxModel({
    graph: {
      name: "parakeet_test_decoder",
      nodes: [
        { op: "Equal", inputs: ["targets", "blank_id"], outputs: ["is_blank"] },
        { op: "Not", inputs: ["is_blank"], outputs: ["is_token"] },
        { op: "Cast", inputs: ["is_token"], outputs: ["emitted"], attributes: { to: { int: 1 } } },
        { op: "Add", inputs: ["states.1", "emitted"], outputs: ["states"] },
        { op: "Equal", inputs: ["positions", "states"], outputs: ["at_position"] },
        { op: "Cast", inputs: ["at_position"], outputs: ["outputs"], attributes: { to: { int: 1 } } },
        { op: "Identity", inputs: ["target_length"], outputs: ["prednet_lengths"] },
        { op: "Identity", inputs: ["cell"], outputs: ["cell_next"] },
      ],
      inputs: [
        { name: "targets", type: "int32", shape: [1, 1] },
        { name: "target_length", type: "int32", shape: [1] },
        { name: "states.1", type: "float", shape: [1, 1, 1] },
        { name: "cell", type: "float", shape: [1, 1, 1] },
      ],
      outputs: [
        { name: "outputs", type: "float", shape: [1, positions, 1] },
        { name: "prednet_lengths", type: "int32", shape: [1] },
        { name: "states", type: "float", shape: [1, 1, 1] },
        { name: "cell_next", type: "float", shape: [1, 1, 1] },
      ],
      initializers: [
        { name: "blank_id", type: "int32", dims: [], values: [blankId] },
        {
          name: "positions",
          type: "float",
          dims: [1, positions, 1],
          values: Array.from({ length: positions }, (_, i) => i),
        },
      ],
    },
  });
}

/** The token logit that gives probability `p` against a blank and `others` other tokens at logit 0. */
function logitFor(p: number, others: number) {
  const sure = Math.min(Math.max(p, 1e-6), 0.999_999);
  return Math.log((sure * (others + 1)) / (1 - sure));
}

function joinerModel(script: ScriptToken[], vocab: string[]) {
  const vocabSize = vocab.length + 1; // with <blk>
  const blankId = vocab.length;
  const width = vocabSize + NUM_DURATIONS;
  const positions = script.length + 1;
  const atOnset = new Array<number>(positions * width).fill(0);
  script.forEach((entry, row) => {
    const p = entry.p ?? 0.95;
    const logit = logitFor(p, vocabSize - 2);
    // Greedy search takes the arg-max token: a probability at or under 1 / vocabSize would lose to <blk>.
    if (!(logit > 0)) throw new Error(`p ${p} of ${entry.token} is too low for greedy search to pick it`);
    if (!Number.isInteger(entry.frames) || entry.frames < 0 || entry.frames >= NUM_DURATIONS)
      throw new Error(`frames of ${entry.token} must be 0…${NUM_DURATIONS - 1}`);
    atOnset[row * width + vocab.indexOf(entry.token)] = logit;
    atOnset[row * width + vocabSize + entry.frames] = SURE;
  });
  // After the script: nothing more to say.
  atOnset[script.length * width + blankId] = SURE;
  atOnset[script.length * width + vocabSize + 1] = SURE;
  const elsewhere = new Array<number>(width).fill(0);
  elsewhere[blankId] = SURE;
  elsewhere[vocabSize + 1] = SURE;

  return onnxModel({
    graph: {
      name: "parakeet_test_joiner",
      nodes: [
        { op: "Reshape", inputs: ["encoder_outputs", "scalar_shape"], outputs: ["onset"] },
        { op: "Reshape", inputs: ["decoder_outputs", "position_shape"], outputs: ["position"] },
        { op: "MatMul", inputs: ["position", "at_onset"], outputs: ["onset_logits"] },
        { op: "Mul", inputs: ["onset", "onset_logits"], outputs: ["if_onset"] },
        { op: "Sub", inputs: ["one", "onset"], outputs: ["not_onset"] },
        { op: "Mul", inputs: ["not_onset", "elsewhere"], outputs: ["if_not"] },
        { op: "Add", inputs: ["if_onset", "if_not"], outputs: ["logits"] },
        { op: "Reshape", inputs: ["logits", "output_shape"], outputs: ["outputs"] },
      ],
      inputs: [
        { name: "encoder_outputs", type: "float", shape: [1, 1, 1] },
        { name: "decoder_outputs", type: "float", shape: [1, positions, 1] },
      ],
      outputs: [{ name: "outputs", type: "float", shape: [1, 1, 1, width] }],
      initializers: [
        { name: "scalar_shape", type: "int64", dims: [2], values: [1, 1] },
        { name: "position_shape", type: "int64", dims: [2], values: [1, positions] },
        { name: "output_shape", type: "int64", dims: [4], values: [1, 1, 1, width] },
        { name: "at_onset", type: "float", dims: [positions, width], values: atOnset },
        { name: "elsewhere", type: "float", dims: [1, width], values: elsewhere },
        { name: "one", type: "float", dims: [], values: [1] },
      ],
    },
  });
}

/**
 * Writes encoder.onnx, decoder.onnx, joiner.onnx and tokens.txt into `dir` (created if needed): a model that
 * emits `script` in order, token by token, at the onsets of sound in its input.
 */
export async function writeParakeetTestModel(dir: string, script: ScriptToken[]): Promise<ParakeetTestModel> {
  if (script.length === 0) throw new Error("the script needs at least one token");
  await mkdir(dir, { recursive: true });
  const vocab = vocabulary(script);
  const blankId = vocab.length;
  const files: ParakeetTestModel = {
    encoder: path.join(dir, "encoder.onnx"),
    decoder: path.join(dir, "decoder.onnx"),
    joiner: path.join(dir, "joiner.onnx"),
    tokens: path.join(dir, "tokens.txt"),
  };
  await Promise.all([
    writeFile(files.encoder, encoderModel(vocab.length)),
    writeFile(files.decoder, decoderModel(script.length + 1, blankId)),
    writeFile(files.joiner, joinerModel(script, vocab)),
    writeFile(files.tokens, [...vocab, "<blk>"].map((token, id) => `${token} ${id}\n`).join("")),
  ]);
  return files;
}

// ---- Test audio ------------------------------------------------------------------------------------------

export type Burst = { start: number; end: number };

/**
 * `samples` of digital silence with deterministic noise (±0.3 full scale) in each burst (sample indices, end
 * exclusive), as Float32 in [-1, 1).
 */
export function burstPcm(samples: number, bursts: Burst[], seed = 12_345): Float32Array {
  const pcm = new Float32Array(samples);
  let x = seed;
  for (const burst of bursts)
    for (let i = Math.max(0, burst.start); i < Math.min(samples, burst.end); i++) {
      x = (x * 1_103_515_245 + 12_345) & 0x7fffffff;
      pcm[i] = ((x >> 8) / 0x7fffff - 0.5) * 0.6;
    }
  return pcm;
}

/** A 16 kHz mono 16-bit PCM WAV of `pcm` (what the normaliser makes, and what local-wav reads). */
export function wavBytes(pcm: Float32Array): Buffer {
  const data = Buffer.alloc(pcm.length * 2);
  pcm.forEach((v, i) => data.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(v * 32768))), i * 2));
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
