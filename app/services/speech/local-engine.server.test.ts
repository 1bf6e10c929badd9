import { execFile } from "node:child_process";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { makeSpeechWav, makeTempDir, removeTempDir } from "../../../tests/support/audio-fixtures";

import {
  createLocalSpeechEngine,
  findSpeech,
  planWindows,
  SAMPLE_RATE,
  type LocalSpeechConfig,
  type LocalSpeechEngine,
} from "./local-engine.server";
import { readWavInfo } from "./local-wav.server";
import { SpeechEngineError, type SpeechRequest } from "./types";

// The embedded engine (ADR 0011) on the only models these machines have (../shared/models, beside the
// repository in CI): Silero VAD with real weights, and whisper.cpp "tiny" with its vocabulary but no tensors —
// it loads and runs the real inference code but recognises nothing. What the model would say is covered by the
// token → word rules, tested on synthetic whisper.cpp output (local-words.server.test.ts).

const SHARED = path.resolve(process.cwd(), "../shared/models");
const TINY_WHISPER = path.join(SHARED, "for-tests-ggml-tiny.bin");
const SILERO = path.join(SHARED, "silero_vad.onnx");
/** A real ggml file that is not a whisper model: whisper.cpp refuses it (and smart-whisper would crash). */
const NOT_WHISPER = path.join(SHARED, "for-tests-silero-v6.2.0-ggml.bin");

const run = promisify(execFile);
const SLOW = 180_000;

let dir: string;
let speech: string;
let silence: string;

function config(overrides: Partial<LocalSpeechConfig> = {}): LocalSpeechConfig {
  return { whisperModel: TINY_WHISPER, vadModel: SILERO, threads: 2, ...overrides };
}

function request(file: string, overrides: Partial<SpeechRequest> = {}): SpeechRequest {
  return {
    file,
    language: "de",
    durationSeconds: 5,
    vocabulary: [{ content: "Kopfschmerzen" }, { content: "Fieber" }],
    ...overrides,
  };
}

/**
 * A whisper.cpp model with the tiny test model's vocabulary and mel filters but a made-up architecture (1 layer,
 * 64 dimensions) and deterministic random weights: real inference that produces real (meaningless) tokens,
 * with probabilities and timestamps, in well under a second.
 */
async function writeRandomWhisperModel(target: string) {
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

async function rejection(promise: Promise<unknown>): Promise<SpeechEngineError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SpeechEngineError);
  return error as SpeechEngineError;
}

beforeAll(async () => {
  dir = await makeTempDir("skribent-local-engine-");
  speech = await makeSpeechWav(dir);
  silence = path.join(dir, "silence.wav");
  await run("ffmpeg", [
    ...["-hide_banner", "-nostdin", "-loglevel", "error", "-y"],
    ...["-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "5", "-c:a", "pcm_s16le", silence],
  ]);
});

afterAll(async () => {
  await removeTempDir(dir);
});

describe("recognition windows", () => {
  const s = (seconds: number) => Math.round(seconds * SAMPLE_RATE);

  it("pads speech, merges what touches, and packs pieces into windows of at most 28 s", () => {
    const windows = planWindows(
      [
        { start: s(1), end: s(3) },
        { start: s(3.2), end: s(5) }, // touches the first once padded
        { start: s(10), end: s(20) },
        { start: s(30), end: s(45) }, // does not fit beside the others
      ],
      s(60),
    );
    expect(windows).toHaveLength(2);
    expect(windows[0].ranges).toEqual([
      { start: s(0.8), end: s(5.2) },
      { start: s(9.8), end: s(20.2) },
    ]);
    expect(windows[0].pieces[1].windowStart).toBeCloseTo(4.4 + 0.1);
    expect(windows[0].pieces[1].fileStart).toBeCloseTo(9.8);
    expect(windows[1].pieces).toEqual([{ windowStart: 0, fileStart: 29.8, duration: 15.4 }]);
  });
});

describe("Silero VAD through sherpa-onnx", () => {
  it(
    "finds the speech in spoken German and nothing in digital silence",
    async () => {
      const info = await readWavInfo(speech);
      const found = await findSpeech(SILERO, speech);
      expect(found.length).toBeGreaterThan(0);
      const covered = found.reduce((sum, r) => sum + (r.end - r.start), 0);
      expect(found[0].start).toBeLessThan(1);
      expect(found[found.length - 1].end).toBeGreaterThan(info.seconds - 1);
      expect(found[found.length - 1].end).toBeLessThanOrEqual(info.seconds + 0.01);
      expect(covered / info.seconds).toBeGreaterThan(0.6);

      expect(await findSpeech(SILERO, silence)).toEqual([]);
    },
    SLOW,
  );
});

describe("the local engine", () => {
  let engine: LocalSpeechEngine;

  beforeAll(() => {
    engine = createLocalSpeechEngine(config());
  });

  afterAll(async () => {
    await engine.unload();
  });

  it(
    "runs whisper.cpp on the speech the VAD found; the empty tiny model recognises nothing and nothing breaks",
    async () => {
      const info = await readWavInfo(speech);
      const result = await engine.transcribe(request(speech));
      expect(result).toEqual({ engine: "local", language: "de", audioSeconds: info.seconds, words: [] });
    },
    SLOW,
  );

  it(
    "turns real whisper.cpp tokens (random weights) into words timed inside the recording",
    async () => {
      const model = path.join(dir, "random-whisper.bin");
      await writeRandomWhisperModel(model);
      const random = createLocalSpeechEngine(config({ whisperModel: model }));
      try {
        const info = await readWavInfo(speech);
        const result = await random.transcribe(request(speech));
        expect(result.audioSeconds).toBeCloseTo(info.seconds);
        expect(result.words.length).toBeGreaterThan(0);
        let previous = 0;
        for (const word of result.words) {
          expect(word.text.trim()).not.toBe("");
          expect(word.text).not.toMatch(/\[_|<\|/);
          expect(word.start).toBeGreaterThanOrEqual(previous);
          expect(word.end).toBeGreaterThanOrEqual(word.start);
          expect(word.end).toBeLessThanOrEqual(info.seconds + 0.01);
          expect(word.confidence).toBeGreaterThanOrEqual(0);
          expect(word.confidence).toBeLessThanOrEqual(1);
          expect(word.speaker).toBe("S1");
          previous = word.start;
        }
        // A lone short answer (under whisper.cpp's 1-second minimum, so the engine pads it with silence) goes
        // through the same path; what random weights make of it is anybody's guess.
        const short = await makeSpeechWav(dir, "Ja.");
        expect((await readWavInfo(short)).seconds).toBeLessThan(1);
        expect(await findSpeech(SILERO, short)).toHaveLength(1);
        const answer = await random.transcribe(request(short));
        for (const word of answer.words) expect(word.end).toBeLessThanOrEqual(answer.audioSeconds + 0.01);
      } finally {
        await random.unload();
      }
    },
    SLOW,
  );

  it(
    "stops at the VAD for silence: whisper is never loaded",
    async () => {
      // A whisper "model" that cannot be loaded: silence must not get as far as noticing.
      const unloadable = createLocalSpeechEngine(config({ whisperModel: NOT_WHISPER }));
      expect(await unloadable.transcribe(request(silence))).toMatchObject({ engine: "local", words: [] });
      // The same engine on speech reaches whisper and reports the file, without crashing this process.
      const error = await rejection(unloadable.transcribe(request(speech)));
      expect(error.kind).toBe("not_configured");
      expect(error.message).toContain(NOT_WHISPER);
      expect(error.message).toContain("npm run models");
      expect(error.options.userMessageKey).toBe("transcriptions:errors.modelsMissing");
    },
    SLOW,
  );

  it("reports missing model files as not_configured with what the operator should do", async () => {
    const missing = path.join(dir, "nowhere", "ggml-small.bin");
    const broken = createLocalSpeechEngine(config({ whisperModel: missing }));
    const error = await rejection(broken.transcribe(request(speech)));
    expect(error.kind).toBe("not_configured");
    expect(error.message).toContain(`${missing} (LOCAL_WHISPER_MODEL) is missing`);
    expect(error.message).toContain("Run `npm run models`");
    expect(error.message).toContain("LOCAL_WHISPER_MODEL");
    expect(error.options.userMessageKey).toBe("transcriptions:errors.modelsMissing");

    const health = await broken.check();
    expect(health.status).toBe("not_configured");
    expect(health.detail).toContain("npm run models");
    expect(health.detail).toContain(missing);
  });

  it(
    "turns a VAD file onnxruntime cannot parse into not_configured instead of an aborted process",
    async () => {
      const garbage = path.join(dir, "garbage.onnx");
      await writeFile(garbage, Buffer.concat([Buffer.from([0x08, 0x07]), Buffer.alloc(2000, 0xab)]));
      const error = await rejection(createLocalSpeechEngine(config({ vadModel: garbage })).transcribe(request(speech)));
      expect(error.kind).toBe("not_configured");
      expect(error.message).toMatch(/VAD model .*garbage\.onnx cannot be loaded: the loader crashed/);
    },
    SLOW,
  );

  it("checks files cheaply: healthy with the models, not_configured with a file of the wrong kind", async () => {
    expect(await engine.check()).toEqual({ status: "healthy" });
    const wrongKind = path.join(dir, "not-a-model.bin");
    await copyFile(SILERO, wrongKind);
    const health = await createLocalSpeechEngine(config({ whisperModel: wrongKind })).check();
    expect(health.status).toBe("not_configured");
    expect(health.detail).toContain("is not a whisper.cpp (ggml) model");
    const half = await createLocalSpeechEngine(config({ segmentationModel: SILERO })).check();
    expect(half.status).toBe("healthy");
    expect(half.detail).toContain("speaker separation is off");
  });

  it("honours an aborted signal before doing any work", async () => {
    const controller = new AbortController();
    controller.abort(new Error("cancelled"));
    await expect(engine.transcribe(request(speech, { signal: controller.signal }))).rejects.toThrow("cancelled");
  });
});
