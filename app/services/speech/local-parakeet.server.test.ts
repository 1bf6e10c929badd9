import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  burstPcm,
  SAMPLES_PER_FRAME,
  wavBytes,
  writeParakeetTestModel,
  type Burst,
  type ParakeetTestModel,
  type ScriptToken,
} from "../../../tests/support/parakeet-test-model";
import { planWindows } from "./local-engine.server";
import {
  parakeetRecognizersInMemory,
  parakeetWorker,
  wordsFromParakeet,
  type ParakeetConfig,
} from "./local-parakeet.server";
import { readSampleRanges, readWavInfo, SAMPLE_RATE } from "./local-wav.server";
import { SpeechEngineError, type EngineWord } from "./types";

// The real sherpa-onnx-node recognizer (OfflineRecognizer.createAsync / decodeAsync, TDT greedy search) on a tiny
// NeMo TDT transducer built by the test (tests/support/parakeet-test-model.ts): it emits a fixed script of
// SentencePiece tokens at the onsets of noise bursts, so which words come out, when, and how sure the model is
// are known. The audio goes the engine's way: a WAV on disk, speech stretches planned into one window by
// planWindows (0.2 s padding, 0.1 s between pieces), read back with readSampleRanges.

const GAP_SAMPLES = Math.round(0.1 * SAMPLE_RATE);

// A gc() for this test file: whether `unload` really lets the recognizer go can only be seen after a collection.
v8.setFlagsFromString("--expose-gc");
const collectGarbage = vm.runInNewContext("gc") as () => void;

/** A group of script tokens the model emits at one onset, at `at` seconds in the recording. */
type Group = { at: number; burstFrames: number; tokens: ScriptToken[] };

// Speech stretches [2.0, 5.0] s and [9.0, 10.5] s become pieces starting at 1.8 s (window 0 s) and at 8.8 s
// (window 3.5 s). Every onset below sits on an 80 ms boundary of that window: window = file − 1.8 in the first
// piece, file − 5.3 in the second.
const SPEECH = [
  { start: 2.0 * SAMPLE_RATE, end: 5.0 * SAMPLE_RATE },
  { start: 9.0 * SAMPLE_RATE, end: 10.5 * SAMPLE_RATE },
];
const GROUPS: Group[] = [
  { at: 2.04, burstFrames: 2, tokens: [{ token: "▁Also", frames: 2 }] },
  { at: 2.28, burstFrames: 1, tokens: [{ token: ",", frames: 1, p: 0.7 }] },
  { at: 2.44, burstFrames: 1, tokens: [{ token: "▁der", frames: 1 }] },
  { at: 2.6, burstFrames: 2, tokens: [{ token: "▁Pati", frames: 2 }] },
  { at: 2.84, burstFrames: 2, tokens: [{ token: "ent", frames: 2, p: 0.3 }] },
  { at: 3.16, burstFrames: 2, tokens: [{ token: "▁hat", frames: 2 }] },
  {
    at: 3.48,
    burstFrames: 2,
    tokens: [
      { token: "▁z", frames: 0 },
      { token: ".", frames: 0 },
      { token: "B", frames: 0 },
      { token: ".", frames: 2 },
    ],
  },
  { at: 3.8, burstFrames: 1, tokens: [{ token: "▁Kopf", frames: 1 }] },
  { at: 3.96, burstFrames: 1, tokens: [{ token: "schmer", frames: 1, p: 0.6 }] },
  { at: 4.12, burstFrames: 3, tokens: [{ token: "zen", frames: 3 }] },
  { at: 4.44, burstFrames: 1, tokens: [{ token: ".", frames: 1, p: 0.8 }] },
  { at: 9.06, burstFrames: 2, tokens: [{ token: "▁Ist", frames: 2 }] },
  { at: 9.3, burstFrames: 2, tokens: [{ token: "▁das", frames: 2 }] },
  { at: 9.54, burstFrames: 2, tokens: [{ token: "▁neu", frames: 2 }] },
  { at: 9.78, burstFrames: 1, tokens: [{ token: "?", frames: 1, p: 0.9 }] },
];
const SCRIPT = GROUPS.flatMap((g) => g.tokens);
const RECORDING_SECONDS = 12;

function burstsOf(groups: Group[]): Burst[] {
  return groups.map((g) => {
    const start = Math.round(g.at * SAMPLE_RATE);
    return { start, end: start + g.burstFrames * SAMPLES_PER_FRAME };
  });
}

function speechWord(text: string, start: number, end: number, confidence = 0.95): EngineWord {
  return { text, start, end, confidence, speaker: "S1" };
}

function mark(text: string, at: number, confidence: number): EngineWord {
  return {
    text,
    start: at,
    end: at,
    confidence,
    speaker: "S1",
    punctuation: true,
    ...(/[.?!]/u.test(text) ? { endOfSentence: true } : {}),
  };
}

/** Word by word, times to the microsecond (sherpa-onnx reports times in 10 ms steps, log-probs to 6 places). */
function expectWords(actual: EngineWord[], expected: EngineWord[]) {
  expect(actual.map((w) => w.text)).toEqual(expected.map((w) => w.text));
  actual.forEach((word, i) => {
    const want = expected[i];
    expect({ ...word, start: 0, end: 0, confidence: 0 }, word.text).toEqual({
      ...want,
      start: 0,
      end: 0,
      confidence: 0,
    });
    expect(word.start, `${word.text} start`).toBeCloseTo(want.start, 6);
    expect(word.end, `${word.text} end`).toBeCloseTo(want.end, 6);
    expect(word.confidence, `${word.text} confidence`).toBeCloseTo(want.confidence, 4);
  });
}

let dir: string;
let model: ParakeetTestModel;
let wav: string;

function config(files: Partial<ParakeetConfig> = {}): ParakeetConfig {
  return { ...model, threads: 1, ...files };
}

async function collected(): Promise<number> {
  for (let i = 0; i < 50 && parakeetRecognizersInMemory() > 0; i++) {
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return parakeetRecognizersInMemory();
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "parakeet-test-"));
  model = await writeParakeetTestModel(path.join(dir, "model"), SCRIPT);
  wav = path.join(dir, "consultation.wav");
  await writeFile(wav, wavBytes(burstPcm(RECORDING_SECONDS * SAMPLE_RATE, burstsOf(GROUPS))));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("Parakeet through sherpa-onnx on the test model", () => {
  it("hears the script in a planned window and times each word in the recording", async () => {
    const info = await readWavInfo(wav);
    const windows = planWindows(SPEECH, info.samples);
    expect(windows).toHaveLength(1);
    expect(windows[0].pieces).toEqual([
      { windowStart: 0, fileStart: 1.8, duration: 3.4 },
      { windowStart: 3.5, fileStart: 8.8, duration: 1.9 },
    ]);
    const pcm = await readSampleRanges(wav, info, windows[0].ranges, GAP_SAMPLES);

    const words = await parakeetWorker(config()).recognise(pcm, {
      language: "de",
      prompt: "",
      pieces: windows[0].pieces,
    });

    // start = the first token's frame; end = the last letter token's frame + its TDT duration (80 ms frames).
    expectWords(words, [
      speechWord("Also", 2.04, 2.2),
      mark(",", 2.2, 0.7),
      speechWord("der", 2.44, 2.52),
      // "▁Pati" + "ent": one doubtful piece makes the word doubtful.
      speechWord("Patient", 2.6, 3.0, 0.3),
      speechWord("hat", 3.16, 3.32),
      // An abbreviation keeps its dots and ends no sentence.
      speechWord("z.B.", 3.48, 3.64),
      speechWord("Kopfschmerzen", 3.8, 4.36, 0.6),
      mark(".", 4.36, 0.8),
      // The second piece: window 3.76 s is 9.06 s in the recording.
      speechWord("Ist", 9.06, 9.22),
      speechWord("das", 9.3, 9.46),
      speechWord("neu", 9.54, 9.7),
      mark("?", 9.7, 0.9),
    ]);
  });

  it("ignores language and prompt: Parakeet v3 finds the language itself and takes no prompt", async () => {
    const info = await readWavInfo(wav);
    const [window] = planWindows(SPEECH, info.samples);
    const pcm = await readSampleRanges(wav, info, window.ranges, GAP_SAMPLES);
    const worker = parakeetWorker(config());
    const german = await worker.recognise(pcm, { language: "de", prompt: "", pieces: window.pieces });
    const english = await worker.recognise(pcm, {
      language: "en",
      prompt: "Kopfschmerzen, Patient, Ibuprofen",
      pieces: window.pieces,
    });
    expect(english).toEqual(german);
  });

  it("finds no words in silence, in a window shorter than a second, or in no audio at all", async () => {
    const worker = parakeetWorker(config());
    const request = { language: "de", prompt: "", pieces: [] };
    expect(await worker.recognise(new Float32Array(3 * SAMPLE_RATE), request)).toEqual([]);
    expect(await worker.recognise(new Float32Array(0), request)).toEqual([]);
    // 0.3 s with one burst at 80 ms: the window is padded with silence to a second, and the word is heard.
    const short = burstPcm(0.3 * SAMPLE_RATE, [{ start: SAMPLES_PER_FRAME, end: 3 * SAMPLES_PER_FRAME }]);
    const words = await worker.recognise(short, {
      ...request,
      pieces: [{ windowStart: 0, fileStart: 60, duration: 0.3 }],
    });
    expectWords(words, [speechWord("Also", 60.08, 60.24)]);
  });

  it("frees the model on unload and loads it again on the next recognition", async () => {
    const worker = parakeetWorker(config());
    await worker.unload(); // loaded by the tests before
    expect(await collected()).toBe(0);

    await worker.load();
    expect(parakeetRecognizersInMemory()).toBe(1);
    await worker.unload();
    expect(await collected()).toBe(0);

    const short = burstPcm(SAMPLE_RATE, [{ start: SAMPLES_PER_FRAME, end: 3 * SAMPLES_PER_FRAME }]);
    const words = await worker.recognise(short, { language: "de", prompt: "", pieces: [] });
    expect(words.map((w) => w.text)).toEqual(["Also"]);
    expect(parakeetRecognizersInMemory()).toBe(1);
    await worker.unload();
    expect(await collected()).toBe(0);
  });

  it("releases the model after the idle time, unless a live run holds it", async () => {
    const copy = path.join(dir, "idle");
    const files = await writeParakeetTestModel(copy, SCRIPT);
    const worker = parakeetWorker({ ...files, threads: 1 }, { idleUnloadMs: 50 });
    expect(await collected()).toBe(0);

    const release = worker.hold();
    await worker.load();
    await new Promise((resolve) => setTimeout(resolve, 200));
    collectGarbage();
    expect(parakeetRecognizersInMemory()).toBe(1);

    release();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await collected()).toBe(0);
  });
});

describe("Parakeet model files that cannot be used", () => {
  async function failure(files: Partial<ParakeetConfig>): Promise<SpeechEngineError> {
    const error = await parakeetWorker(config(files))
      .recognise(new Float32Array(SAMPLE_RATE), { language: "de", prompt: "", pieces: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpeechEngineError);
    const engineError = error as SpeechEngineError;
    expect(engineError.kind).toBe("not_configured");
    expect(engineError.options.userMessageKey).toBe("transcriptions:errors.modelsMissing");
    return engineError;
  }

  it("names a missing file", async () => {
    const missing = path.join(dir, "nowhere", "encoder.int8.onnx");
    const error = await failure({ encoder: missing });
    expect(error.message).toContain(`Parakeet encoder ${missing} is missing`);
    expect(error.message).toContain("sherpa-onnx-nemo-parakeet-tdt-0.6b-v3-int8");
  });

  it("names a file that is not an ONNX model", async () => {
    const notOnnx = path.join(dir, "joiner-not-onnx.onnx");
    await writeFile(notOnnx, "<!DOCTYPE html><title>404</title>");
    const error = await failure({ joiner: notOnnx });
    expect(error.message).toContain(`Parakeet joiner ${notOnnx} is not an ONNX model`);
  });

  it("names a tokens.txt whose last token is not <blk>", async () => {
    const tokens = path.join(dir, "tokens-no-blank.txt");
    const lines = (await readFile(model.tokens, "utf8")).trim().split("\n");
    await writeFile(tokens, `${lines.slice(0, -1).join("\n")}\n`);
    const error = await failure({ tokens });
    expect(error.message).toContain(`Parakeet tokens ${tokens} is not a NeMo tokens.txt`);
  });

  // Each of these ends a process that loads it (sherpa-onnx's exit(-1)): the child-process check keeps it out.
  it("refuses encoder and decoder swapped, naming the files, without harming this process", async () => {
    const error = await failure({ encoder: model.decoder, decoder: model.encoder });
    expect(error.message).toContain(`encoder ${model.decoder}`);
    expect(error.message).toMatch(/cannot be loaded: the loader failed \(exit \d+\)/u);
  });

  it("refuses a joiner that loads but aborts when it runs (a decoder in its place)", async () => {
    const error = await failure({ joiner: model.decoder });
    expect(error.message).toContain(`joiner ${model.decoder}`);
    expect(error.message).toContain("the loader crashed (SIGABRT)");
  });

  it("refuses a tokens.txt of another model (one token more than the encoder's vocab_size)", async () => {
    const tokens = path.join(dir, "tokens-other-model.txt");
    const lines = (await readFile(model.tokens, "utf8")).trim().split("\n");
    const blank = lines.length - 1;
    await writeFile(tokens, `${lines.slice(0, -1).join("\n")}\n▁extra ${blank}\n<blk> ${blank + 1}\n`);
    const error = await failure({ tokens });
    expect(error.message).toContain(`tokens ${tokens}`);
    // sherpa-onnx's own words: <blk> is numbered vocab_size + 1 here, one past the encoder's last token.
    expect(error.message).toContain("<blk> is not the last token");
  });

  it("checks a replaced file again", async () => {
    const encoder = path.join(dir, "encoder-replaced.onnx");
    await copyFile(model.decoder, encoder);
    await failure({ encoder });
    await copyFile(model.encoder, encoder);
    const words = await parakeetWorker(config({ encoder })).recognise(
      burstPcm(SAMPLE_RATE, [{ start: SAMPLES_PER_FRAME, end: 3 * SAMPLES_PER_FRAME }]),
      { language: "de", prompt: "", pieces: [] },
    );
    expect(words.map((w) => w.text)).toEqual(["Also"]);
  });
});

describe("wordsFromParakeet", () => {
  it("starts a word at ▁ (or the space sherpa-onnx puts in its place) and drops special tokens", () => {
    const words = wordsFromParakeet(
      {
        text: "Blutdruck 120/80.",
        tokens: ["<unk>", "▁Blut", "druck", " 120", "/", "80", ".", "<0x0A>"],
        timestamps: [0, 0.08, 0.24, 0.48, 0.56, 0.64, 0.8, 0.88],
        durations: [0.08, 0.08, 0.16, 0.08, 0.08, 0.08, 0.08, 0.08],
        ys_log_probs: [-0.01, Math.log(0.9), Math.log(0.8), Math.log(0.7), Math.log(0.95), Math.log(0.6), -0.01, -0.01],
      },
      { windowSeconds: 2, pieces: [{ windowStart: 0, fileStart: 100, duration: 2 }] },
    );
    expectWords(words, [
      speechWord("Blutdruck", 100.08, 100.4, 0.8),
      speechWord("120/80", 100.48, 100.72, 0.6),
      mark(".", 100.72, Math.exp(-0.01)),
    ]);
  });

  it("keeps words inside the window and gives the unknown confidence without log-probs", () => {
    const words = wordsFromParakeet(
      { text: "Ja!", tokens: ["▁Ja", "!"], timestamps: [0.8, 0.96], durations: [0.4, 0.08] },
      { windowSeconds: 0.9 },
    );
    expectWords(words, [speechWord("Ja", 0.8, 0.9, 0.5), mark("!", 0.9, 0.5)]);
  });

  it("has no words for an empty result", () => {
    expect(wordsFromParakeet({ text: "", tokens: [], timestamps: [] }, { windowSeconds: 1 })).toEqual([]);
  });
});
