#!/usr/bin/env node
// The embedded live engine (app/services/live/engines/local-live.server.ts) fed at real-time pace: how long
// after a speaker stops does the final for that stretch of speech come? The audio is espeak-ng English
// sentences with pauses between them, sent as the browser does (one 4096-sample buffer every 256 ms). For
// each speech segment the VAD closed it prints when the speech ended (audio time), how long whisper.cpp took,
// and the lag: from the moment the speaker stopped to the moment the engine had the final (with a model that
// recognises words, to the AddTranscript itself). The engine is bundled from the TypeScript source with esbuild.
// A bench prints figures; it is not a test (exit 1 only when a measurement fails).
//
// The measurement runs in a child process whose output goes to a log file: whisper.cpp and onnxruntime write
// their own log lines to stderr. --verbose shows them.
//
// Usage: node bench/live-local-lag.mjs [--models ../shared/models] [--whisper for-tests-ggml-tiny.bin]
//        [--vad silero_vad.onnx] [--threads 2] [--sentences 4] [--pause 1.5] [--verbose]
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, promisify } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RATE = 16_000;
const BUFFER_SAMPLES = 4096;
const PAD_SECONDS = 0.2; // the engine's padding around a segment (local-engine.server.ts PAD_SAMPLES)

const { values: opts } = parseArgs({
  options: {
    models: { type: "string", default: path.resolve(ROOT, "../shared/models") },
    whisper: { type: "string", default: "for-tests-ggml-tiny.bin" },
    vad: { type: "string", default: "silero_vad.onnx" },
    threads: { type: "string", default: "2" },
    sentences: { type: "string", default: "4" },
    pause: { type: "string", default: "1.5" },
    verbose: { type: "boolean", default: false },
    child: { type: "string" },
  },
});

const SENTENCES = [
  "Good morning, the patient reports a headache since Monday",
  "She has had a slight fever in the evenings and feels tired",
  "Blood pressure is one hundred and forty over ninety",
  "We will start ibuprofen four hundred milligrams twice a day",
  "Please come back next week if the symptoms do not improve",
  "The examination of the heart and the lungs was normal",
];

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// ---- Child: the measurement -----------------------------------------------------------------------------

async function measure(job) {
  const engine = await import(pathToFileURL(job.bundle).href);
  const audio = fs.readFileSync(job.pcm);
  const config = { whisperModel: job.whisperModel, vadModel: job.vadModel, threads: job.threads };
  const worker = engine.whisperWorker(config);
  await worker.load(); // as start() does: the model load is not part of a segment's lag

  const segments = [];
  const finals = [];
  const recognise = async (pcm, request) => {
    const started = performance.now();
    const words = await worker.recognise(pcm, { ...request, urgent: true });
    const piece = request.pieces[0];
    segments.push({
      speechEnd: piece.fileStart + piece.duration - PAD_SECONDS,
      seconds: pcm.length / RATE,
      whisperMs: performance.now() - started,
      doneAt: performance.now(),
      words: words.length,
    });
    return words;
  };
  let t0 = 0;
  let resolveEnd;
  const ended = new Promise((resolve) => (resolveEnd = resolve));
  const run = await engine.createLocalLiveEngine(config, { recognise }).start({
    kind: "dictation",
    language: "en",
    vocabulary: [],
    emit: (message) => {
      if (message.message === "AddTranscript") finals.push({ end: message.metadata.end_time, at: performance.now() });
      if (message.message === "Error") resolveEnd(new Error(message.reason));
    },
    onClose: () => resolveEnd(),
  });

  // Real time: buffer i leaves the browser once its last sample was spoken, at t0 + (i + 1) · 256 ms.
  t0 = performance.now();
  const buffers = Math.ceil(audio.length / (BUFFER_SAMPLES * 2));
  for (let i = 0; i < buffers; i++) {
    const due = t0 + ((i + 1) * BUFFER_SAMPLES * 1000) / RATE;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    run.addAudio(audio.subarray(i * BUFFER_SAMPLES * 2, (i + 1) * BUFFER_SAMPLES * 2));
  }
  const endedAt = performance.now();
  run.end();
  const failure = await ended;
  if (failure) throw failure;
  await worker.unload();
  return {
    audioSeconds: audio.length / 2 / RATE,
    endAt: (endedAt - t0) / 1000,
    segments: segments.map((s) => ({ ...s, lagMs: s.doneAt - (t0 + s.speechEnd * 1000) })),
    finals: finals.map((f) => ({ end: f.end, lagMs: f.at - (t0 + f.end * 1000) })),
  };
}

// ---- Parent: audio, bundle, report ----------------------------------------------------------------------

async function makeSpeech(dir, count, pause) {
  const run = promisify(execFile);
  const silence = (seconds) => Buffer.alloc(Math.round(seconds * RATE) * 2);
  const parts = [silence(1)];
  for (let i = 0; i < count; i++) {
    const wav = path.join(dir, `s${i}.wav`);
    const raw = path.join(dir, `s${i}.raw`);
    await run("espeak-ng", ["-v", "en", "-w", wav, "--", SENTENCES[i % SENTENCES.length]]);
    await run("sox", [wav, "-t", "raw", "-r", `${RATE}`, "-c", "1", "-b", "16", "-e", "signed-integer", raw]);
    parts.push(fs.readFileSync(raw), silence(pause));
  }
  const file = path.join(dir, "speech.pcm");
  fs.writeFileSync(file, Buffer.concat(parts));
  return file;
}

async function bundleEngine(dir) {
  const { build } = await import("esbuild");
  const outfile = path.join(dir, "local-live.mjs");
  await build({
    stdin: {
      contents: [
        'export { createLocalLiveEngine } from "./app/services/live/engines/local-live.server";',
        'export { whisperWorker } from "./app/services/speech/local-engine.server";',
      ].join("\n"),
      resolveDir: ROOT,
      sourcefile: "bench-live-local-entry.ts",
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
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return outfile;
}

function runChild(job, log) {
  return new Promise((resolve, reject) => {
    const out = opts.verbose ? "inherit" : fs.openSync(log, "w");
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--child", JSON.stringify(job)], {
      cwd: ROOT,
      stdio: ["ignore", out, out, "ipc"],
    });
    if (typeof out === "number") fs.closeSync(out);
    let answer;
    child.on("message", (message) => (answer = message));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (answer?.result) return resolve(answer.result);
      const tail = opts.verbose ? "" : fs.readFileSync(log, "utf8").split("\n").slice(-30).join("\n");
      reject(new Error(`${answer?.error ?? `the measuring process ended (${signal ?? `exit ${code}`})`}\n${tail}`));
    });
  });
}

function report(job, r) {
  const f = (v, d = 0) => v.toFixed(d).padStart(8);
  console.log(
    `\nLocal live engine at real-time pace: ${r.audioSeconds.toFixed(1)} s of espeak-ng English, ${job.sentences} ` +
      `sentences ${job.pause} s apart,\nwhisper model ${path.basename(job.whisperModel)}, ${job.threads} threads, ` +
      `load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores.\n`,
  );
  console.log("  speech ended (s)  segment (s)  whisper (ms)  lag (ms)  words");
  for (const s of r.segments)
    console.log(`  ${f(s.speechEnd, 2)}         ${f(s.seconds, 2)}     ${f(s.whisperMs)}   ${f(s.lagMs)}  ${s.words}`);
  const lags = r.segments.map((s) => s.lagMs);
  const whisper = r.segments.map((s) => s.whisperMs);
  console.log(
    `\n  lag: median ${Math.round(median(lags))} ms, max ${Math.round(Math.max(...lags))} ms;` +
      ` whisper.cpp per segment: median ${Math.round(median(whisper))} ms` +
      `\n  lag = from the end of speech (audio time) to the recognised segment: the VAD's 0.5 s of silence, up to one` +
      `\n  256-ms buffer of the browser's, and whisper.cpp.`,
  );
  if (r.finals.length)
    console.log(
      `  finals: ${r.finals.length}, lag to AddTranscript median ${Math.round(median(r.finals.map((x) => x.lagMs)))} ms`,
    );
  else
    console.log(
      "  NOTE: this model recognised no words (the test model has no tensors), so no AddTranscript was sent; the lag" +
        "\n  is to the end of recognition, where the final would be sent. A real model (ggml-small) takes longer.",
    );
}

async function main() {
  const threads = Number(opts.threads);
  const sentences = Number(opts.sentences);
  const pause = Number(opts.pause);
  if (!(threads >= 1 && sentences >= 1 && pause > 0.5))
    throw new Error("--threads ≥ 1, --sentences ≥ 1, --pause > 0.5");
  const whisperModel = path.resolve(opts.models, opts.whisper);
  const vadModel = path.resolve(opts.models, opts.vad);
  for (const file of [whisperModel, vadModel]) if (!fs.existsSync(file)) throw new Error(`${file} is missing`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-live-"));
  try {
    const pcm = await makeSpeech(dir, sentences, pause);
    const bundle = await bundleEngine(path.join(dir, "bundle"));
    const job = { bundle, pcm, whisperModel, vadModel, threads, sentences, pause };
    console.log("measuring (real time: as long as the audio)…");
    report(job, await runChild(job, path.join(dir, "native.log")));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (opts.child) {
  measure(JSON.parse(opts.child)).then(
    (result) => process.send({ result }, () => process.exit(0)),
    (error) => process.send({ error: error?.stack ?? String(error) }, () => process.exit(1)),
  );
} else {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
