/**
 * Test models for the embedded engine's test file (local-engine.server.test.ts): where the machine keeps the real
 * ones (../shared/models, beside the repository in CI), and a whisper.cpp model made from the tiny one that
 * produces real tokens. Not a test file itself.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const SHARED = path.resolve(process.cwd(), "../shared/models");
export const TINY_WHISPER = path.join(SHARED, "for-tests-ggml-tiny.bin");
export const SILERO = path.join(SHARED, "silero_vad.onnx");
/** A real ggml file that is not a whisper model: whisper.cpp refuses it (and smart-whisper would crash). */
export const NOT_WHISPER = path.join(SHARED, "for-tests-silero-v6.2.0-ggml.bin");

/**
 * A whisper.cpp model with the tiny test model's vocabulary and mel filters but a made-up architecture (1 layer,
 * 64 dimensions) and deterministic random weights: real inference that produces real (meaningless) tokens,
 * with probabilities and timestamps, in well under a second.
 */
export async function writeRandomWhisperModel(target: string) {
  const tiny = await readFile(TINY_WHISPER);
  const [vocab, audioCtx, , , , textCtx, , , , mels] = Array.from({ length: 11 }, (_, i) =>
    tiny.readInt32LE(4 + i * 4),
  );
  const S = 64;
  const header = Buffer.alloc(48);
  header.writeUInt32LE(0x67676d6c, 0);
  [vocab, audioCtx, S, 2, 1, textCtx, S, 2, 1, mels, 1 /* f16 */].forEach((v, i) => header.writeInt32LE(v, 4 + i * 4));
  const parts: Buffer[] = [header, tiny.subarray(48)]; // mel filters and vocabulary, as they are
  let seed = 1;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return (seed / 0x7fffffff - 0.5) * 0.2;
  };
  const half = (v: number) => {
    if (v === 0) return 0;
    const bits = new Uint32Array(new Float32Array([v]).buffer)[0];
    const exponent = ((bits >>> 23) & 0xff) - 112;
    return exponent <= 0 ? 0 : ((bits >>> 16) & 0x8000) | (exponent << 10) | ((bits >>> 13) & 0x3ff);
  };
  const tensor = (name: string, ne: number[], fill: "random" | "one" | "zero" = "random", f16 = false) => {
    const head = Buffer.alloc(12 + 4 * ne.length);
    head.writeInt32LE(ne.length, 0);
    head.writeInt32LE(Buffer.byteLength(name), 4);
    head.writeInt32LE(f16 ? 1 : 0, 8);
    ne.forEach((v, i) => head.writeInt32LE(v, 12 + 4 * i));
    const count = ne.reduce((a, b) => a * b, 1);
    const data = Buffer.alloc(count * (f16 ? 2 : 4));
    for (let i = 0; i < count; i++) {
      const v = fill === "one" ? 1 : fill === "zero" ? 0 : random();
      if (f16) data.writeUInt16LE(half(v), i * 2);
      else data.writeFloatLE(v, i * 4);
    }
    parts.push(head, Buffer.from(name), data);
  };
  const norm = (prefix: string) => {
    tensor(`${prefix}.weight`, [S], "one");
    tensor(`${prefix}.bias`, [S], "zero");
  };
  const block = (prefix: string, attentions: string[]) => {
    norm(`${prefix}.mlp_ln`);
    tensor(`${prefix}.mlp.0.weight`, [S, 4 * S], "random", true);
    tensor(`${prefix}.mlp.0.bias`, [4 * S], "zero");
    tensor(`${prefix}.mlp.2.weight`, [4 * S, S], "random", true);
    tensor(`${prefix}.mlp.2.bias`, [S], "zero");
    for (const a of attentions) {
      norm(`${prefix}.${a}_ln`);
      for (const part of ["query", "key", "value", "out"]) {
        tensor(`${prefix}.${a}.${part}.weight`, [S, S], "random", true);
        if (part !== "key") tensor(`${prefix}.${a}.${part}.bias`, [S], "zero");
      }
    }
  };
  tensor("encoder.positional_embedding", [S, audioCtx]);
  tensor("encoder.conv1.weight", [3, mels, S], "random", true);
  tensor("encoder.conv1.bias", [1, S], "zero");
  tensor("encoder.conv2.weight", [3, S, S], "random", true);
  tensor("encoder.conv2.bias", [1, S], "zero");
  norm("encoder.ln_post");
  block("encoder.blocks.0", ["attn"]);
  tensor("decoder.positional_embedding", [S, textCtx]);
  tensor("decoder.token_embedding.weight", [S, vocab], "random", true);
  norm("decoder.ln");
  block("decoder.blocks.0", ["attn", "cross_attn"]);
  await writeFile(target, Buffer.concat(parts));
}
