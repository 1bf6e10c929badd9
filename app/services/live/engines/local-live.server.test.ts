import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

import { LIVE_BUFFER_BYTES, type TranscriptMessage } from "~/live/protocol";
import { findSpeech, whisperWorker, type LocalSpeechConfig } from "~/services/speech/local-engine.server";
import { readAllSamples, readWavInfo } from "~/services/speech/local-wav.server";
import type { EngineWord } from "~/services/speech/types";

import { makeSpeechWav, makeTempDir, removeTempDir } from "../../../../tests/support/audio-fixtures";
import { LiveEngineError, type LiveEngineMessage, type LiveEngineRun } from "../engine-types";
import { createLocalLiveEngine, type LocalLiveOptions } from "./local-live.server";

// The embedded live engine on the real Silero VAD (../shared/models). Segmentation is checked with a stand-in
// recogniser that answers one word spanning the audio it was given: the only whisper model here (tiny without
// tensors) recognises nothing, so the real whisper path is run for what it can show — that it runs, shares the
// batch engine's worker and says nothing for an empty recognition.

const SHARED = path.resolve(process.cwd(), "../shared/models");
const config = (overrides: Partial<LocalSpeechConfig> = {}): LocalSpeechConfig => ({
  whisperModel: path.join(SHARED, "for-tests-ggml-tiny.bin"),
  vadModel: path.join(SHARED, "silero_vad.onnx"),
  threads: 2,
  ...overrides,
});
const RATE = 16_000;
const SLOW = 120_000;

let dir: string;
let first: Float32Array; // one spoken sentence each, without pauses inside
let second: Float32Array;
const silence = (seconds: number) => new Float32Array(Math.round(seconds * RATE));

function concat(...parts: Float32Array[]) {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

function pcm16(samples: Float32Array) {
  const bytes = Buffer.alloc(samples.length * 2);
  samples.forEach((v, i) => bytes.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(v * 32768))), i * 2));
  return bytes;
}

/** Two sentences 1.5 s apart, with their spans in seconds. */
function twoSentences() {
  const a = 0.8;
  const b = a + first.length / RATE + 1.5;
  const audio = concat(silence(a), first, silence(1.5), second, silence(1.2));
  return { audio, spans: [a, a + first.length / RATE, b, b + second.length / RATE] };
}

async function speech(text: string) {
  const file = await makeSpeechWav(dir, text);
  return readAllSamples(file, await readWavInfo(file));
}

/** A recogniser that answers "speech" + "." spanning what it was given, and records what that was. */
function standIn(gate?: (call: number) => Promise<void>) {
  const calls: Array<{ start: number; end: number }> = [];
  const recognise: NonNullable<LocalLiveOptions["recognise"]> = async (pcm, { pieces }) => {
    const start = pieces[0].fileStart;
    const end = start + pcm.length / RATE;
    calls.push({ start, end });
    await gate?.(calls.length);
    const base = { confidence: 0.8, speaker: "S1" };
    return [
      { ...base, text: "speech", start, end },
      { ...base, text: ".", start: end, end, punctuation: true, endOfSentence: true },
    ] satisfies EngineWord[];
  };
  return { calls, recognise };
}

/** Starts a run that records what it emits; `until` resolves once a condition holds (no sleeping). */
async function startRun(options: LocalLiveOptions, engineConfig = config()) {
  const messages: LiveEngineMessage[] = [];
  const closes: Array<{ reason?: string }> = [];
  const waiting = new Set<() => void>();
  const notify = () => waiting.forEach((check) => check());
  const run: LiveEngineRun = await createLocalLiveEngine(engineConfig, options).start({
    kind: "dictation",
    language: "en",
    vocabulary: [],
    emit: (message) => (messages.push(message), notify()),
    onClose: (info) => (closes.push(info), notify()),
  });
  const until = (condition: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => condition() && (waiting.delete(check), resolve());
      waiting.add(check);
      check();
    });
  const finals = () => messages.filter((m): m is TranscriptMessage => m.message === "AddTranscript");
  const ended = () => until(() => closes.length > 0);
  return { run, messages, closes, until, finals, ended };
}

function feed(run: LiveEngineRun, audio: Float32Array, bytesPerBuffer = LIVE_BUFFER_BYTES) {
  const bytes = pcm16(audio);
  for (let at = 0; at < bytes.length; at += bytesPerBuffer) run.addAudio(bytes.subarray(at, at + bytesPerBuffer));
}

/** Turns of the event loop, for "nothing more happens" after a step that could only act asynchronously. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

beforeAll(async () => {
  dir = await makeTempDir("skribent-local-live-");
  first = await speech("Good morning doctor the patient reports a headache since Monday");
  second = await speech("She has had a slight fever in the evenings");
}, SLOW);

afterAll(async () => {
  await removeTempDir(dir);
});

describe("the local live engine's segmentation (real Silero VAD)", () => {
  it("gives two sentences a pause apart as two finals, in order, that do not overlap", async () => {
    const { audio, spans } = twoSentences();
    const { calls, recognise } = standIn();
    const live = await startRun({ recognise });
    feed(live.run, audio);
    await live.until(() => live.finals().length === 2); // before end(): the pauses closed both segments
    const [a, b] = live.finals();
    expect(a.metadata.start_time).toBeGreaterThan(spans[0] - 0.5);
    expect(a.metadata.end_time).toBeLessThan(spans[1] + 0.5);
    expect(b.metadata.start_time).toBeGreaterThanOrEqual(a.metadata.end_time);
    expect(b.metadata.start_time).toBeGreaterThan(spans[2] - 0.5);
    expect(b.metadata.end_time).toBeLessThan(spans[3] + 0.5);
    expect(a.metadata.transcript).toBe("speech.");
    expect(a.results.map((r) => r.type)).toEqual(["word", "punctuation"]);
    expect(a.results[1]).toMatchObject({ attaches_to: "previous", is_eos: true });
    expect(calls).toHaveLength(2);
    live.run.end();
    await live.ended();
    expect(live.messages.slice(2)).toEqual([{ message: "EndOfTranscript" }]);
    expect(live.closes).toEqual([{}]);
  });

  it("says nothing for silence, and ends with EndOfTranscript alone", async () => {
    const { calls, recognise } = standIn();
    const live = await startRun({ recognise });
    feed(live.run, silence(5));
    live.run.end();
    await live.ended();
    expect(live.messages).toEqual([{ message: "EndOfTranscript" }]);
    expect(calls).toEqual([]);
  });

  it("on end() recognises the speech still open, then sends EndOfTranscript", async () => {
    const { audio, spans } = twoSentences();
    const cut = Math.round((spans[2] + 1) * RATE); // one second into the second sentence
    const { recognise } = standIn();
    const live = await startRun({ recognise });
    feed(live.run, audio.subarray(0, cut));
    await live.until(() => live.finals().length === 1);
    live.run.end();
    await live.ended();
    expect(live.finals()).toHaveLength(2);
    expect(live.finals()[1].metadata.end_time).toBeCloseTo(cut / RATE, 2);
    expect(live.messages.at(-1)).toEqual({ message: "EndOfTranscript" });
    live.run.addAudio(pcm16(first)); // after the end: ignored
    await turns();
    expect(live.messages).toHaveLength(3);
  });

  it(
    "segments 4096-sample buffers, odd byte slices and one whole buffer as the batch VAD does the file",
    async () => {
      const { audio } = twoSentences();
      const raw = path.join(dir, "two-sentences.raw");
      const file = path.join(dir, "two-sentences.wav");
      await writeFile(raw, pcm16(audio));
      execFileSync("sox", ["-t", "raw", "-r", `${RATE}`, "-e", "signed-integer", "-b", "16", "-c", "1", raw, file]);
      const batch = await findSpeech(config().vadModel, file);
      expect(batch).toHaveLength(2);

      for (const slice of [LIVE_BUFFER_BYTES, 1001, audio.length * 2]) {
        const { calls, recognise } = standIn();
        const live = await startRun({ recognise });
        feed(live.run, audio, slice);
        live.run.end();
        await live.ended();
        expect(calls).toHaveLength(2);
        calls.forEach((call, i) => {
          // The engine hands whisper each segment with 0.2 s of audio either side.
          expect(Math.abs(call.start + 0.2 - batch[i].start)).toBeLessThan(0.1);
          expect(Math.abs(call.end - 0.2 - batch[i].end)).toBeLessThan(0.1);
        });
      }
    },
    SLOW,
  );

  it("close() stops at once: the segment whisper is working on is never reported", async () => {
    const { audio } = twoSentences();
    let letSecondFinish = () => {};
    let secondStarted = () => {};
    const secondHeld = new Promise<void>((resolve) => (letSecondFinish = resolve));
    const inSecond = new Promise<void>((resolve) => (secondStarted = resolve));
    const { recognise } = standIn((n) => (n === 2 ? (secondStarted(), secondHeld) : Promise.resolve()));
    const live = await startRun({ recognise });
    feed(live.run, audio);
    await inSecond;
    expect(live.finals()).toHaveLength(1);
    live.run.close();
    expect(live.closes).toEqual([{ reason: "closed" }]);
    letSecondFinish();
    live.run.end();
    await turns();
    expect(live.messages).toHaveLength(1);
    expect(live.closes).toHaveLength(1);
  });

  it("reports a recognition failure as a job_error and then says nothing more", async () => {
    const live = await startRun({ recognise: () => Promise.reject(new Error("whisper.cpp failed: out of memory")) });
    feed(live.run, twoSentences().audio);
    await live.ended();
    expect(live.messages).toEqual([
      {
        message: "Error",
        type: "job_error",
        reason: "The local speech engine failed: whisper.cpp failed: out of memory",
      },
    ]);
    live.run.end();
    await turns();
    expect(live.messages).toHaveLength(1);
    expect(live.closes).toHaveLength(1);
  });
});

describe("the local live engine with whisper.cpp", () => {
  it(
    "runs the shared whisper worker on each segment; the empty test model recognises nothing, so only the end is said",
    async () => {
      // The engine asks the process's worker (the batch engine's) on each segment, as urgent work.
      const worker = whisperWorker(config());
      const recognise = vi.spyOn(worker, "recognise");
      try {
        const live = await startRun({});
        feed(live.run, twoSentences().audio);
        live.run.end();
        await live.ended();
        expect(live.messages).toEqual([{ message: "EndOfTranscript" }]);
        expect(recognise).toHaveBeenCalledTimes(2);
        expect(recognise.mock.calls.map(([, request]) => request.urgent)).toEqual([true, true]);
      } finally {
        recognise.mockRestore();
      }
      await worker.unload();
    },
    SLOW,
  );

  it(
    "lets live segments pass batch windows waiting for the shared whisper lane",
    async () => {
      const worker = whisperWorker(config());
      const request = { language: "en", prompt: "", pieces: [{ windowStart: 0, fileStart: 0, duration: 1.5 }] };
      const finished: string[] = [];
      const job = (name: string, urgent: boolean) =>
        worker.recognise(silence(1.5), { ...request, urgent }).then(() => finished.push(name));
      // The first batch window takes the lane at once; the second waits, and the live segment overtakes it.
      await Promise.all([job("batch 1", false), job("batch 2", false), job("live", true)]);
      expect(finished).toEqual(["batch 1", "live", "batch 2"]);
      await worker.unload();
    },
    SLOW,
  );

  it(
    "refuses to start without usable models, with the operator's advice",
    async () => {
      const missing = path.join(dir, "nowhere", "ggml-small.bin");
      const error = await startRun({}, config({ whisperModel: missing })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LiveEngineError);
      expect(error).toMatchObject({ type: "engine_unavailable" });
      expect((error as Error).message).toContain(`${missing} (LOCAL_WHISPER_MODEL) is missing`);
      expect((error as Error).message).toContain("npm run models");

      // A ggml file that is no whisper model: the child-process check catches it before it could crash us.
      const foreign = path.join(SHARED, "for-tests-silero-v6.2.0-ggml.bin");
      const refused = await startRun({}, config({ whisperModel: foreign })).catch((e: unknown) => e);
      expect(refused).toMatchObject({ type: "engine_unavailable" });
      expect((refused as Error).message).toContain(`whisper model ${foreign} cannot be loaded`);

      const health = await createLocalLiveEngine(config({ whisperModel: missing })).check();
      expect(health.status).toBe("not_configured");
      expect(await createLocalLiveEngine(config()).check()).toEqual({ status: "healthy" });
    },
    SLOW,
  );
});
