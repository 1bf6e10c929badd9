import { execFile } from "node:child_process";
import { copyFile, writeFile } from "node:fs/promises";
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
import {
  NOT_WHISPER,
  SILERO,
  TINY_WHISPER,
  writeRandomWhisperModel,
} from "../../../tests/support/local-engine-helpers";
import { readWavInfo } from "./local-wav.server";
import { SpeechEngineError, type SpeechRequest } from "./types";

// The embedded engine (ADR 0011) on the only models these machines have (../shared/models, beside the
// repository in CI): Silero VAD with real weights, and whisper.cpp "tiny" with its vocabulary but no tensors —
// it loads and runs the real inference code but recognises nothing. What the model would say is covered by the
// token → word rules, tested on synthetic whisper.cpp output (local-words.server.test.ts).
// Where the models are, and a model with random weights: local-engine-test-helpers.ts.

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
    expect(error.message).toContain("`npm run models` does it ahead of time");
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
