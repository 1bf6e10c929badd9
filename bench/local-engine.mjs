#!/usr/bin/env node
// The embedded speech engine (app/services/speech/local-engine.server.ts, ADR 0011) against bare whisper.cpp
// on the same audio: what the engine adds around the model (model-file checks, WAV reading, Silero VAD,
// window planning, token → word mapping). The bare side calls smart-whisper's raw addon — the binding the
// engine uses, loaded the same way (build/Release/smart-whisper.node) — with the same model file, the same
// whisper parameters and the whole file as one Float32 buffer: no VAD, no word mapping. The engine side is
// createLocalSpeechEngine(...).transcribe(...), bundled from the TypeScript source with esbuild.
// A bench prints figures; it is not a test (exit 1 only when a measurement fails).
//
// The measurements run in a child process whose output goes to a log file: whisper.cpp and onnxruntime
// write their own log lines to stderr (dozens per model load). --verbose shows them.
//
// Usage: npm run bench:local-engine
//        node bench/local-engine.mjs --models ../shared/models --runs 5 --seconds 20 --threads 2
// Options: --models <dir> (../shared/models beside the repository)  --whisper <file in models>
//          (for-tests-ggml-tiny.bin; deployments use ggml-small.bin)  --vad <file> (silero_vad.onnx)
//          --runs <n> (5)  --seconds <audio length> (20)  --threads <n> (2, LOCAL_THREADS' default)  --verbose
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, promisify } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TINY_TEST_MODEL = "for-tests-ggml-tiny.bin";
const SAMPLE_RATE = 16_000;

const { values: opts } = parseArgs({
  options: {
    models: { type: "string", default: path.resolve(ROOT, "../shared/models") },
    whisper: { type: "string", default: TINY_TEST_MODEL },
    vad: { type: "string", default: "silero_vad.onnx" },
    runs: { type: "string", default: "5" },
    seconds: { type: "string", default: "20" },
    threads: { type: "string", default: "2" },
    verbose: { type: "boolean", default: false },
    child: { type: "string" },
  },
});

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// ---- Child: the measurements ----------------------------------------------------------------------------

/** The samples of a 16 kHz mono 16-bit PCM WAV as Float32 in [-1, 1) — the bare engine's input. */
function readPcm(file) {
  const bytes = fs.readFileSync(file);
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = bytes.toString("latin1", at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === "data") {
      const end = Math.min(bytes.length, at + 8 + size);
      const pcm = new Float32Array(Math.floor((end - at - 8) / 2));
      for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(at + 8 + 2 * i) / 32768;
      return pcm;
    }
    at += 8 + size + (size % 2);
  }
  throw new Error(`${file} has no data chunk`);
}

async function measure(job) {
  const engineModule = await import(pathToFileURL(job.bundle).href);
  const require = createRequire(path.join(ROOT, "package.json"));
  const addonFile = path.join(
    path.dirname(require.resolve("smart-whisper/package.json")),
    "build/Release/smart-whisper.node",
  );
  const addon = require(addonFile);
  if (engineModule.loadSmartWhisper() !== addon) throw new Error("the engine loaded another smart-whisper addon");
  const pcm = readPcm(job.wav);

  // The bare engine: the binding's own functions, as the engine calls them.
  const loadModel = addon.WhisperModel.load.bind(addon.WhisperModel);
  const whisper = addon.transcribe.bind(addon);
  // Inside the engine, the same functions are timed (the engine finds them on the same addon object), so its
  // own work can be told apart from whisper.cpp's, whose time varies far more than the engine adds.
  const inside = { load: 0, whisper: 0, samples: 0, params: undefined };
  addon.WhisperModel.load = async (...args) => {
    const started = performance.now();
    try {
      return await loadModel(...args);
    } finally {
      inside.load += performance.now() - started;
    }
  };
  addon.transcribe = (handle, samples, params, finish, progress) => {
    const started = performance.now();
    inside.samples += samples.length;
    inside.params = params;
    return whisper(
      handle,
      samples,
      params,
      (result) => {
        inside.whisper += performance.now() - started;
        finish(result);
      },
      progress,
    );
  };

  // The parameters createLocalSpeechEngine passes to whisper.cpp (local-engine.server.ts), with the prompt
  // the worker's request gives it (the built-in German vocabulary); checked after the warm-up against what
  // the engine really passed.
  const vocabulary = engineModule.getVocabulary("de");
  const prompt = engineModule.whisperPrompt(vocabulary);
  const params = engineModule.whisperParams({ language: "de", threads: job.threads, prompt });
  const transcribeBare = (model) =>
    new Promise((resolve, reject) =>
      whisper(
        model.handle,
        pcm,
        params,
        (result) => (Array.isArray(result) ? resolve(result) : reject(new Error(String(result)))),
        () => {},
      ),
    );
  const tokensOf = (segments) => segments.reduce((n, s) => n + (s.tokens?.length ?? 0), 0);

  const request = { file: job.wav, language: "de", durationSeconds: pcm.length / SAMPLE_RATE, vocabulary };
  const config = { whisperModel: job.whisperModel, vadModel: job.vadModel, threads: job.threads };
  const timed = async (task) => {
    const started = performance.now();
    const value = await task();
    return { ms: performance.now() - started, value };
  };

  async function bareRun() {
    const load = await timed(() => loadModel(job.whisperModel, false));
    await transcribeBare(load.value); // the first transcription on a fresh model (its state is set up)
    const run = await timed(() => transcribeBare(load.value));
    await load.value.free();
    return { load: load.ms, run: run.ms, whisper: run.ms, tokens: tokensOf(run.value) };
  }

  /** One call of the engine, split into whisper.cpp's model load, whisper.cpp's transcription and the rest. */
  async function engineCall(engine) {
    Object.assign(inside, { load: 0, whisper: 0, samples: 0, params: undefined });
    const call = await timed(() => engine.transcribe(request));
    return { ...inside, total: call.ms, words: call.value.words.length };
  }

  async function engineRun() {
    const engine = engineModule.createLocalSpeechEngine(config, { idleUnloadMs: 60 * 60_000 });
    const first = await engineCall(engine); // loads the model
    const run = await engineCall(engine);
    await engine.unload();
    return {
      load: first.load,
      firstOverhead: first.total - first.load - first.whisper,
      run: run.total,
      whisper: run.whisper,
      overhead: run.total - run.whisper,
      samples: run.samples,
      words: run.words,
    };
  }

  // Once per process (not counted): the engine's first call also loads every model file in a short-lived
  // child process first (probeModels, remembered per process and file); the bare side warms the addon.
  const probing = await engineRun();
  if (probing.samples === 0)
    throw new Error("the VAD found no speech in the audio: the engine never called whisper.cpp");
  if (JSON.stringify(inside.params) !== JSON.stringify(params))
    throw new Error(
      `the engine now calls whisper.cpp with other parameters; update this bench to match:\n` +
        `engine: ${JSON.stringify(inside.params)}\nbench:  ${JSON.stringify(params)}`,
    );
  await bareRun();

  const vad = [];
  let speech = [];
  for (let i = 0; i < job.runs; i++) {
    const found = await timed(() => engineModule.findSpeech(job.vadModel, job.wav));
    vad.push(found.ms);
    speech = found.value;
  }

  const runs = [];
  for (let i = 0; i < job.runs; i++) {
    // Alternating which side goes first, so drifts (heat, other load) fall on both sides alike.
    if (i % 2 === 0) {
      const bare = await bareRun();
      runs.push({ bare, engine: await engineRun() });
    } else {
      const engine = await engineRun();
      runs.push({ bare: await bareRun(), engine });
    }
  }
  return {
    audioSeconds: pcm.length / SAMPLE_RATE,
    promptChars: prompt.length,
    probingOverhead: probing.firstOverhead,
    vadMs: median(vad),
    speechStretches: speech.length,
    speechSeconds: speech.reduce((sum, r) => sum + r.end - r.start, 0),
    runs,
  };
}

// ---- Parent: audio, bundle, report ----------------------------------------------------------------------

const TEXT =
  "Guten Tag. Der Patient berichtet über Kopfschmerzen seit drei Tagen und leichtes Fieber am Abend. " +
  "Er hat zweimal täglich vierhundert Milligramm Ibuprofen genommen, ohne deutliche Besserung. " +
  "Der Blutdruck liegt bei hundertvierzig zu neunzig, die Temperatur bei achtunddreißig Grad. ";

async function makeSpeech(dir, seconds) {
  const run = promisify(execFile);
  const raw = path.join(dir, "espeak.wav");
  const out = path.join(dir, "speech.wav");
  await run("espeak-ng", ["-v", "de", "-w", raw, "--", TEXT.repeat(Math.ceil(seconds / 15) + 1)]);
  await run("sox", [raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out, "trim", "0", `${seconds}`]);
  fs.rmSync(raw);
  return out;
}

async function bundleEngine(dir) {
  const { build } = await import("esbuild");
  const outfile = path.join(dir, "local-engine.mjs");
  await build({
    stdin: {
      contents: [
        'export { createLocalSpeechEngine, findSpeech, whisperParams } from "./app/services/speech/local-engine.server";',
        'export { loadSmartWhisper } from "./app/services/speech/local-native.server";',
        'export { getVocabulary, whisperPrompt } from "./app/services/speech/vocabulary.server";',
      ].join("\n"),
      resolveDir: ROOT,
      sourcefile: "bench-local-engine-entry.ts",
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
  // Bare imports (zod, sherpa-onnx-node, smart-whisper) resolve from this repository's node_modules.
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return outfile;
}

function runChild(job, log, children) {
  return new Promise((resolve, reject) => {
    const out = opts.verbose ? "inherit" : fs.openSync(log, "w");
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--child", JSON.stringify(job)], {
      cwd: ROOT,
      stdio: ["ignore", out, out, "ipc"],
    });
    children.add(child);
    if (typeof out === "number") fs.closeSync(out);
    let answer;
    child.on("message", (message) => (answer = message));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      children.delete(child);
      if (answer?.result) return resolve(answer.result);
      const tail = opts.verbose ? "" : fs.readFileSync(log, "utf8").split("\n").slice(-30).join("\n");
      reject(new Error(`${answer?.error ?? `the measuring process ended (${signal ?? `exit ${code}`})`}\n${tail}`));
    });
  });
}

function report(job, r) {
  const ms = (v) => String(Math.round(v)).padStart(11);
  const tiny = path.basename(job.whisperModel) === TINY_TEST_MODEL;
  const bare = r.runs.map((x) => x.bare);
  const engine = r.runs.map((x) => x.engine);
  const med = (list, key) => median(list.map((x) => x[key]));
  const paired = (key) => median(r.runs.map((x) => x.engine[key] - x.bare[key]));
  const tokens = Math.max(...bare.map((x) => x.tokens));
  const words = Math.max(...engine.map((x) => x.words));
  const whisperTimes = [...bare, ...engine].map((x) => x.whisper);

  console.log(
    `\nLocal engine against bare whisper.cpp (smart-whisper) on the same audio: ${r.audioSeconds.toFixed(1)} s of ` +
      `German speech (espeak-ng, 16 kHz mono),\nwhisper model ${path.basename(job.whisperModel)}, VAD ` +
      `${path.basename(job.vadModel)}, ${job.threads} threads, beam search 5, the vocabulary prompt (` +
      `${r.promptChars} characters). Medians of ${job.runs} runs, ms.\n`,
  );
  if (tiny)
    console.log(
      `  NOTE: ${TINY_TEST_MODEL} is whisper "tiny" with its hyper-parameters and vocabulary but NO TENSORS. It loads\n` +
        "  and runs whisper.cpp's real code but recognises nothing: both sides transcribe nothing here (bare: " +
        `${tokens} tokens, engine: ${words} words).\n` +
        "  So these figures measure the engine's OVERHEAD, NOT recognition speed. A real model (deployments use\n" +
        "  ggml-small.bin) loads and runs far longer; the overhead stays about the same.\n",
    );
  else console.log(`  Recognised: bare up to ${tokens} tokens, engine up to ${words} words.\n`);

  console.log(`  ${"".padEnd(34)}${["load", "run", "whisper.cpp", "the rest"].map((h) => h.padStart(12)).join("")}`);
  const row = (name, load, run, whisper, rest) =>
    console.log(
      `  ${name.padEnd(34)} ${[load, run, whisper, rest].map((v) => (v === null ? "—".padStart(11) : ms(v))).join(" ")}`,
    );
  row("bare whisper.cpp", med(bare, "load"), med(bare, "run"), med(bare, "whisper"), null);
  row("local engine", med(engine, "load"), med(engine, "run"), med(engine, "whisper"), med(engine, "overhead"));
  row("difference (engine − bare)", paired("load"), paired("run"), paired("whisper"), null);
  console.log(
    `
  load        = loading the model file: WhisperModel.load() (bare); in the engine, the same call inside its
                first transcription on a fresh engine (the engine loads lazily; its other first-call work
                outside whisper.cpp: ${Math.round(med(engine, "firstOverhead"))} ms)
  run         = one transcription with the model loaded (the second call on the same model or engine)
  whisper.cpp = the binding's transcribe() within "run" (timed on the binding itself inside the engine)
  the rest    = run − whisper.cpp: the engine's own work — THE OVERHEAD: model-file checks, WAV header, a new
                Silero VAD over the whole file (alone, findSpeech: ${Math.round(r.vadMs)} ms), window planning, reading the
                speech back, token → word mapping (nothing to map here)
  difference  = median of the per-run differences, the runs alternating between the two sides. whisper.cpp's
                own time varied from ${Math.round(Math.min(...whisperTimes))} to ${Math.round(Math.max(...whisperTimes))} ms over these runs (machine load average ` +
      `${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores),
                so "the rest" is the figure to trust; the run difference also carries that scatter.

  The VAD found ${r.speechStretches} speech stretch(es), ${r.speechSeconds.toFixed(1)} s of speech; the engine handed whisper.cpp ` +
      `${(med(engine, "samples") / SAMPLE_RATE).toFixed(1)} s of audio,
  the bare side all ${r.audioSeconds.toFixed(1)} s (whisper.cpp's encoder works on 30 s windows either way).
  Once per process, not in the table: the engine's very first call also loads each model in a short-lived child
  process before trusting it (probeModels). That call spent ${Math.round(r.probingOverhead)} ms outside whisper.cpp, against
  ${Math.round(med(engine, "firstOverhead"))} ms for the first call of a fresh engine later in the same process.`,
  );
}

async function main() {
  const runs = Number(opts.runs);
  const seconds = Number(opts.seconds);
  const threads = Number(opts.threads);
  if (!(runs >= 1 && seconds > 0 && threads >= 1)) throw new Error("--runs ≥ 1, --seconds > 0, --threads ≥ 1");
  const models = path.resolve(opts.models);
  const whisperModel = path.resolve(models, opts.whisper);
  const vadModel = path.resolve(models, opts.vad);
  for (const file of [whisperModel, vadModel])
    if (!fs.existsSync(file)) throw new Error(`${file} is missing (--models <dir>, --whisper, --vad)`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-local-"));
  const children = new Set();
  const onSignal = (signal) => {
    for (const child of children) child.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const wav = await makeSpeech(dir, seconds);
    const bundle = await bundleEngine(path.join(dir, "bundle"));
    const job = { bundle, wav, whisperModel, vadModel, threads, runs };
    console.log(`measuring (${runs} runs of each side, plus one warm-up)…`);
    const result = await runChild(job, path.join(dir, "native.log"), children);
    report(job, result);
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
