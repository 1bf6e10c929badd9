#!/usr/bin/env node
// The Parakeet recogniser (app/services/speech/local-parakeet.server.ts): decode time per minute of audio through
// parakeetWorker(...).recognise — sherpa-onnx-node's OfflineRecognizer (fbank, encoder, TDT greedy search on a
// libuv thread) and the token → word mapping — in windows of at most 28 s, as the engine plans them. It also
// reports the load time and the longest event-loop stall while decoding (decodeAsync runs off the loop).
//
// THE REAL MODEL'S SPEED CANNOT BE MEASURED HERE. The Parakeet-TDT-0.6B-v3 int8 files (about 670 MB) cannot be
// downloaded on this project's machines, so by default the bench runs the tiny test model of
// tests/support/parakeet-test-model.ts, which has almost no compute: its figures are the pipeline's overhead
// around a model, not Parakeet's speed. With the real files at hand, pass --model DIR (encoder.int8.onnx,
// decoder.int8.onnx, joiner.int8.onnx, tokens.txt) to measure them the same way.
// A bench prints figures; it is not a test (exit 1 only when a measurement fails).
//
// Usage: node bench/local-parakeet.mjs [--minutes 5] [--runs 3] [--threads 2] [--model DIR]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SAMPLE_RATE = 16_000;
const WINDOW_SECONDS = 28;

const { values: opts } = parseArgs({
  options: {
    minutes: { type: "string", default: "5" },
    runs: { type: "string", default: "3" },
    threads: { type: "string", default: "2" },
    model: { type: "string" },
  },
});

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function bundle(dir) {
  const { build } = await import("esbuild");
  const outfile = path.join(dir, "local-parakeet.mjs");
  await build({
    stdin: {
      contents: [
        'export { parakeetWorker } from "./app/services/speech/local-parakeet.server";',
        'export { burstPcm, writeParakeetTestModel, SAMPLES_PER_FRAME } from "./tests/support/parakeet-test-model";',
      ].join("\n"),
      resolveDir: ROOT,
      sourcefile: "bench-local-parakeet-entry.ts",
      loader: "ts",
    },
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  // Bare imports (sherpa-onnx-node) resolve from this repository's node_modules.
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return import(pathToFileURL(outfile).href);
}

/** Bursts of noise, 2 frames on and 2 off (about three words a second): the test model emits a token at each. */
function testAudio(lib, seconds) {
  const frame = lib.SAMPLES_PER_FRAME;
  const samples = Math.round(seconds * SAMPLE_RATE);
  const bursts = [];
  for (let start = 4 * frame; start + 2 * frame < samples; start += 4 * frame)
    bursts.push({ start, end: start + 2 * frame });
  return lib.burstPcm(samples, bursts);
}

async function main() {
  const minutes = Number(opts.minutes);
  const runs = Number(opts.runs);
  const threads = Number(opts.threads);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-parakeet-"));
  try {
    const lib = await bundle(path.join(dir, "bundle"));
    let files;
    if (opts.model) {
      const at = (name) => path.resolve(opts.model, name);
      files = {
        encoder: at("encoder.int8.onnx"),
        decoder: at("decoder.int8.onnx"),
        joiner: at("joiner.int8.onnx"),
        tokens: at("tokens.txt"),
      };
    } else {
      // One token per onset for a whole 28 s window: the decoder starts over with each window.
      const onsets = Math.ceil((WINDOW_SECONDS * SAMPLE_RATE) / (4 * lib.SAMPLES_PER_FRAME));
      const script = Array.from({ length: onsets }, (_, i) => ({ token: `▁w${i}`, frames: 2, p: 0.9 }));
      files = await lib.writeParakeetTestModel(path.join(dir, "model"), script);
    }

    const audio = testAudio(lib, minutes * 60);
    const windowSamples = WINDOW_SECONDS * SAMPLE_RATE;
    const windows = [];
    for (let start = 0; start < audio.length; start += windowSamples) {
      const pcm = audio.subarray(start, Math.min(audio.length, start + windowSamples));
      windows.push({
        pcm,
        pieces: [{ windowStart: 0, fileStart: start / SAMPLE_RATE, duration: pcm.length / SAMPLE_RATE }],
      });
    }

    const worker = lib.parakeetWorker({ ...files, threads });
    const loadStart = performance.now();
    await worker.load();
    const loadMs = performance.now() - loadStart;

    const perMinute = [];
    const stalls = [];
    let words = 0;
    for (let run = 0; run < runs; run++) {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const start = performance.now();
      words = 0;
      for (const window of windows)
        words += (await worker.recognise(window.pcm, { language: "de", prompt: "", pieces: window.pieces })).length;
      const elapsed = performance.now() - start;
      delay.disable();
      perMinute.push(elapsed / minutes);
      stalls.push(delay.max / 1e6);
    }
    await worker.unload();

    const model = opts.model ? `the model in ${opts.model}` : "the TEST model (tests/support/parakeet-test-model.ts)";
    console.log(`Parakeet recogniser (sherpa-onnx-node 1.13.8, TDT greedy search) on ${model}`);
    console.log(
      `  audio: ${minutes} min in ${windows.length} windows of ≤ ${WINDOW_SECONDS} s; threads ${threads}; runs ${runs}`,
    );
    console.log(`  load (child-process check + createAsync): ${loadMs.toFixed(0)} ms`);
    console.log(
      `  decode: ${median(perMinute).toFixed(0)} ms per audio minute (median; runs: ${perMinute.map((v) => v.toFixed(0)).join(", ")})`,
    );
    console.log(`  real-time factor: ${(median(perMinute) / 60_000).toFixed(4)}`);
    console.log(`  words per run: ${words}`);
    console.log(
      `  longest event-loop stall while decoding: ${median(stalls).toFixed(1)} ms (median of runs; acceptWaveform ` +
        "computes the fbank on the calling thread, only the decode itself runs on a libuv thread)",
    );
    console.log(`  rss after the runs: ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MB`);
    if (!opts.model)
      console.log(
        "  NOTE: the real Parakeet-TDT-0.6B-v3 model's speed cannot be measured on this machine (its files cannot be " +
          "downloaded here). These figures are the recogniser's overhead around a model with almost no compute; " +
          "run with --model DIR where the real files are.",
      );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
