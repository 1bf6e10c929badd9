#!/usr/bin/env node
// The local transcription pipeline (app/services/speech/local-engine.server.ts, ADR 0011) with and without
// speaker separation: seconds per minute of audio for Silero VAD + whisper.cpp recognition
// (createLocalSpeechEngine(...).transcribe), for sherpa-onnx's offline diarization alone (diarizeFile) plus
// laying its turns over the words (assignSpeakers), and for both together; peak RSS of each configuration.
// Each configuration runs in a child process of its own (its peak RSS is its own; whisper.cpp and onnxruntime
// write their log lines to a log file there, --verbose shows them). The TypeScript is bundled with esbuild.
// A bench prints figures; it is not a test (exit 1 only when a measurement fails).
//
// THE REAL MODELS' SPEED CANNOT BE MEASURED HERE. What exists on these machines: Silero VAD (real weights),
// whisper.cpp's for-tests-ggml-tiny.bin (hyper-parameters and vocabulary, NO tensors: whisper.cpp's code runs,
// nothing is recognised) and, for speakers, the two hand-made ONNX graphs the tests build
// (tests/support/speaker-models.ts: frame energy for segmentation, two mel bands for the embedding). So these
// figures are the pipeline's own cost around the models, not Whisper small's, pyannote's or ERes2Net's. Where
// the real files are, pass them (--whisper, --segmentation, --embedding) to measure them the same way.
//
// The audio: about 5 minutes of a consultation in alternating espeak-ng voices (a low-pitched doctor, a
// high-pitched patient: tests/support/consultation-audio.ts, the voices the test speaker models tell apart).
//
// A whisper model that yields no words makes the engine skip its speaker step (nothing to label), so with the
// tiny test model "with speakers" = the engine's transcribe() + diarizeFile() + assignSpeakers() on the script's
// words, timed one after another in the same process: what transcribe() does when there are words. A second,
// optional pass (--random, on by default) runs the whole engine with the tests' random-weight whisper model
// (local-engine-test-helpers.ts: 1 layer, 64 dimensions, meaningless words with times), where transcribe()
// itself diarizes, to show the in-engine difference.
//
// Usage: npm run bench:local-speakers
//        node bench/local-speakers.mjs --minutes 5 --runs 3 --threads 2
// Options: --models <dir> (../shared/models beside the repository)  --whisper <file in models>
//          (for-tests-ggml-tiny.bin)  --vad <file> (silero_vad.onnx)  --segmentation <file>  --embedding <file>
//          (the tests' speaker models when not given)  --minutes <audio length> (5)  --runs <n> (3)
//          --threads <n> (2, LOCAL_THREADS' default)  --no-random  --verbose
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TINY_TEST_MODEL = "for-tests-ggml-tiny.bin";

const { values: opts } = parseArgs({
  options: {
    models: { type: "string", default: path.resolve(ROOT, "../shared/models") },
    whisper: { type: "string", default: TINY_TEST_MODEL },
    vad: { type: "string", default: "silero_vad.onnx" },
    segmentation: { type: "string" },
    embedding: { type: "string" },
    minutes: { type: "string", default: "5" },
    runs: { type: "string", default: "3" },
    threads: { type: "string", default: "2" },
    "no-random": { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
    child: { type: "string" },
  },
});

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const timed = async (task) => {
  const started = performance.now();
  const value = await task();
  return { ms: performance.now() - started, value };
};

/** The script's words spread evenly over each turn (as the diarization tests place them). */
function scriptedWords(turns) {
  return turns.flatMap((turn) => {
    const tokens = turn.text.split(/\s+/);
    const step = (turn.end - turn.start) / tokens.length;
    return tokens.map((text, i) => ({
      text,
      start: turn.start + i * step,
      end: turn.start + (i + 1) * step,
      confidence: 0.9,
      speaker: null,
    }));
  });
}

/** Turns of one speaker that follow each other as one. */
function merged(turns) {
  const out = [];
  for (const turn of turns) {
    const last = out[out.length - 1];
    if (last && last.speaker === turn.speaker) last.end = Math.max(last.end, turn.end);
    else out.push({ ...turn });
  }
  return out;
}

// ---- Child: one configuration's measurements -----------------------------------------------------------

async function measure(job) {
  const lib = await import(pathToFileURL(job.bundle).href);
  const request = { file: job.wav, language: "de", durationSeconds: job.seconds, vocabulary: [] };
  // The warm-up (not counted) runs on a short file: it loads the models and checks every model file once per
  // process (pins, and a load in a short-lived child process).
  const warmup = { ...request, file: job.warmup, durationSeconds: 20 };
  const base = { whisperModel: job.whisperModel, vadModel: job.vadModel, threads: job.threads };
  const speakers = { ...base, segmentationModel: job.segmentation, embeddingModel: job.embedding };
  const engineOptions = { idleUnloadMs: 60 * 60_000 };
  const words = scriptedWords(job.turns);
  const runs = [];

  if (job.mode === "plain") {
    // VAD + recognition, no speaker models configured.
    const engine = lib.createLocalSpeechEngine(base, engineOptions);
    const first = await timed(() => engine.transcribe(warmup));
    for (let i = 0; i < job.runs; i++) {
      const vad = await timed(() => lib.findSpeech(job.vadModel, job.wav));
      const run = await timed(() => engine.transcribe(request));
      runs.push({ vad: vad.ms, transcribe: run.ms, words: run.value.words.length, stretches: vad.value.length });
    }
    await engine.unload();
    return { firstMs: first.ms, runs, peakRss: process.resourceUsage().maxRSS * 1024 };
  }

  if (job.mode === "speakers") {
    // The speaker models configured. transcribe() diarizes only when recognition gave words; otherwise the
    // diarization and the labelling are timed after it, as transcribe() would run them.
    const engine = lib.createLocalSpeechEngine(speakers, engineOptions);
    const first = await timed(() => engine.transcribe(warmup));
    const firstDiarize = await timed(() => lib.diarizeFile(speakers, job.warmup));
    for (let i = 0; i < job.runs; i++) {
      const run = await timed(() => engine.transcribe(request));
      const diarize = await timed(() => lib.diarizeFile(speakers, job.wav));
      const assign = await timed(async () => lib.assignSpeakers(words, diarize.value));
      const labelled = assign.value;
      runs.push({
        transcribe: run.ms,
        words: run.value.words.length,
        diarize: diarize.ms,
        assign: assign.ms,
        turns: diarize.value,
        speakers: new Set(labelled.map((w) => w.speaker)).size,
      });
    }
    await engine.unload();
    return {
      firstMs: first.ms,
      firstDiarizeMs: firstDiarize.ms,
      runs,
      peakRss: process.resourceUsage().maxRSS * 1024,
    };
  }

  if (job.mode === "random") {
    // The random-weight whisper model gives words, so transcribe() runs the speaker step itself.
    const model = path.join(path.dirname(job.wav), "random-whisper.bin");
    await lib.writeRandomWhisperModel(model);
    const without = lib.createLocalSpeechEngine({ ...base, whisperModel: model }, engineOptions);
    const withSpeakers = lib.createLocalSpeechEngine({ ...speakers, whisperModel: model }, engineOptions);
    await without.transcribe(warmup);
    await withSpeakers.transcribe(warmup);
    for (let i = 0; i < job.runs; i++) {
      // Alternating which goes first, so drifts fall on both alike.
      const order = i % 2 === 0 ? [without, withSpeakers] : [withSpeakers, without];
      const times = new Map();
      for (const engine of order) times.set(engine, await timed(() => engine.transcribe(request)));
      const a = times.get(without);
      const b = times.get(withSpeakers);
      runs.push({
        without: a.ms,
        with: b.ms,
        words: b.value.words.length,
        speakers: new Set(b.value.words.map((w) => w.speaker)).size,
      });
    }
    await without.unload();
    await withSpeakers.unload();
    return { runs, peakRss: process.resourceUsage().maxRSS * 1024 };
  }
  throw new Error(`unknown mode ${job.mode}`);
}

// ---- Parent: audio, models, bundle, report --------------------------------------------------------------

/** Alternating lines, doctor first; repeated (in order) until the consultation is long enough. */
const LINES = [
  ["doctor", "Guten Tag, Frau Becker. Was führt Sie heute zu mir?"],
  ["patient", "Ich habe seit drei Tagen starke Kopfschmerzen und etwas Fieber."],
  ["doctor", "Haben Sie schon Medikamente genommen? Wie hoch war das Fieber?"],
  ["patient", "Ich habe zweimal Ibuprofen genommen. Gestern Abend waren es achtunddreißig Grad."],
  ["doctor", "Haben Sie auch Nackenschmerzen, Übelkeit oder Lichtempfindlichkeit bemerkt?"],
  ["patient", "Nein, der Nacken ist frei. Mir ist nur morgens ein wenig übel."],
  ["doctor", "Nehmen Sie regelmäßig andere Medikamente, zum Beispiel gegen Blutdruck?"],
  ["patient", "Ja, ich nehme jeden Morgen fünf Milligramm Ramipril."],
  ["doctor", "Ich messe jetzt den Blutdruck und höre Herz und Lunge ab."],
  ["patient", "In Ordnung. Soll ich den Pullover ausziehen?"],
  ["doctor", "Der Blutdruck liegt bei hundertvierzig zu neunzig, die Lunge ist frei."],
  ["patient", "Ist das schlimm? Muss ich mir Sorgen machen?"],
  ["doctor", "Nein, das ist wahrscheinlich ein viraler Infekt. Trinken Sie viel und schonen Sie sich."],
  ["patient", "Darf ich weiter Ibuprofen nehmen, wenn die Schmerzen wiederkommen?"],
  ["doctor", "Ja, höchstens dreimal täglich vierhundert Milligramm, und bitte nach dem Essen."],
  ["patient", "Gut. Brauche ich eine Krankschreibung für die Arbeit?"],
  ["doctor", "Ich schreibe Sie bis Freitag krank. Kommen Sie wieder, wenn das Fieber steigt."],
  ["patient", "Vielen Dank, Herr Doktor. Auf Wiedersehen."],
].map(([role, text]) => ({ role, text }));

async function makeConsultation(lib, dir, seconds) {
  // One pass over the lines gives their length; then as many passes as needed, in one file.
  const probe = await lib.makeScriptedWav(dir, LINES, "probe.wav");
  fs.rmSync(probe.file);
  const passes = Math.max(1, Math.round(seconds / probe.seconds));
  const script = Array.from({ length: passes }, () => LINES).flat();
  const consultation = await lib.makeScriptedWav(dir, script, "consultation.wav");
  const warmup = await lib.makeScriptedWav(dir, LINES.slice(0, 4), "warmup.wav");
  return { ...consultation, warmup: warmup.file };
}

async function bundle(dir) {
  const { build } = await import("esbuild");
  const outfile = path.join(dir, "local-speakers.mjs");
  await build({
    stdin: {
      contents: [
        'export { createLocalSpeechEngine, diarizeFile, findSpeech } from "./app/services/speech/local-engine.server";',
        'export { assignSpeakers } from "./app/services/speech/local-speakers.server";',
        'export { writeRandomWhisperModel } from "./tests/support/local-engine-helpers";',
        'export { makeScriptedWav } from "./tests/support/consultation-audio";',
        'export { writeSpeakerModels } from "./tests/support/speaker-models";',
      ].join("\n"),
      resolveDir: ROOT,
      sourcefile: "bench-local-speakers-entry.ts",
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

function report(job, consultation, plain, speakers, random) {
  const minutes = consultation.seconds / 60;
  const perMin = (ms) => (ms / 1000 / minutes).toFixed(2).padStart(7);
  const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  const tiny = path.basename(job.whisperModel) === TINY_TEST_MODEL;
  const med = (list, key) => median(list.map((r) => (typeof key === "function" ? key(r) : r[key])));

  const vad = med(plain.runs, "vad");
  const recognition = med(plain.runs, "transcribe");
  const engineWithSpeakerConfig = med(speakers.runs, "transcribe");
  const engineWords = Math.max(...speakers.runs.map((r) => r.words));
  const diarize = med(speakers.runs, "diarize");
  const assign = med(speakers.runs, "assign");
  // When transcribe() found words it diarized itself; otherwise it did the same work as without speaker models
  // (whose time, measured in the other process, is the baseline) and its speaker step is added from the timings.
  // Comparing the two processes' transcribe() times instead would mostly show whisper.cpp's scatter.
  const totalWith =
    engineWords > 0 ? engineWithSpeakerConfig : recognition + med(speakers.runs, (r) => r.diarize + r.assign);
  const last = speakers.runs[speakers.runs.length - 1];
  const found = merged(last.turns);
  const scriptSwitches = consultation.turns.length;

  console.log(
    `\nLocal transcription with and without speaker separation: ${consultation.seconds.toFixed(1)} s ` +
      `(${minutes.toFixed(2)} audio minutes) of a consultation, ${consultation.turns.length} alternating turns in two ` +
      `espeak-ng voices,\n16 kHz mono. whisper ${path.basename(job.whisperModel)}, VAD ${path.basename(job.vadModel)}, ` +
      `speakers ${job.testSpeakerModels ? "the tests' models (tests/support/speaker-models.ts)" : `${job.segmentation} + ${job.embedding}`}, ` +
      `${job.threads} threads.\nMedians of ${job.runs} runs after one warm-up; machine: ${os.cpus().length} × ` +
      `${os.cpus()[0]?.model ?? "cpu"}, load average ${os.loadavg()[0].toFixed(1)}, node ${process.version}.\n`,
  );
  console.log(`  ${"".padEnd(58)}s per audio minute`);
  const row = (name, ms) => console.log(`  ${name.padEnd(58)}${perMin(ms)}`);
  row("Silero VAD alone (findSpeech)", vad);
  row("VAD + recognition (transcribe, no speaker models)", recognition);
  row("diarization alone (diarizeFile)", diarize);
  row("assigning speakers to the words (assignSpeakers)", assign);
  row("total WITHOUT speakers", recognition);
  row("total WITH speakers", totalWith);
  console.log(
    `  ${"speaker separation adds".padEnd(58)}${perMin(totalWith - recognition)}   (${((totalWith / recognition - 1) * 100).toFixed(0)} %)`,
  );
  console.log(
    `\n  peak RSS (each configuration in a process of its own): without speakers ${mb(plain.peakRss)}, ` +
      `with speakers ${mb(speakers.peakRss)}`,
  );
  console.log(
    `  warm-up (not in the table; on a 4-turn file: loads the models, checks each file once per process): ` +
      `transcribe ${(plain.firstMs / 1000).toFixed(1)} s, diarizeFile ${(speakers.firstDiarizeMs / 1000).toFixed(1)} s`,
  );
  console.log(
    `  diarization found ${new Set(found.map((t) => t.speaker)).size} speakers in ${found.length} turns ` +
      `(the script: 2 speakers, ${scriptSwitches} turns); the script's ${scriptedWords(consultation.turns).length} ` +
      `words got ${last.speakers} speaker labels.`,
  );
  console.log(
    `  VAD: ${plain.runs[0].stretches} speech stretches. Words recognised: ${Math.max(...plain.runs.map((r) => r.words))}` +
      (engineWords === 0
        ? ` — so transcribe() skipped its speaker step (with the speaker models configured it took ` +
          `${perMin(engineWithSpeakerConfig).trim()} s per audio minute in its own process, the same work as ` +
          `without: the difference from ${perMin(recognition).trim()} s is whisper.cpp's scatter); "total WITH ` +
          `speakers" adds diarizeFile + assignSpeakers to "VAD + recognition", as transcribe() runs them when ` +
          "there are words."
        : "; transcribe() diarized itself (total WITH speakers is its own time)."),
  );

  if (random) {
    console.log(
      `\n  The whole engine with the tests' random-weight whisper model (1 layer, 64 dimensions: meaningless words ` +
        `with times),\n  so transcribe() itself diarizes when speaker models are configured (same audio, runs ` +
        `alternating, peak RSS ${mb(random.peakRss)}):`,
    );
    row("  transcribe() without speaker models", med(random.runs, "without"));
    row("  transcribe() with speaker models", med(random.runs, "with"));
    row(
      "  difference (paired)",
      med(random.runs, (r) => r.with - r.without),
    );
    console.log(
      `    ${Math.max(...random.runs.map((r) => r.words))} words, labelled with ` +
        `${Math.max(...random.runs.map((r) => r.speakers))} speakers.`,
    );
  }

  console.log(
    `
  NOTE: THE REAL MODELS' SPEED CANNOT BE MEASURED HERE; none of them can be downloaded on this machine.
  ${
    tiny
      ? `- ${TINY_TEST_MODEL} has whisper tiny's hyper-parameters but NO TENSORS: whisper.cpp allocates tiny-sized empty
    weights and computes with them (4 layers, 384 dimensions, beam search 5 with its temperature fallback) but
    recognises nothing, so its decoding is degenerate and no word reaches the speaker step. "VAD + recognition"
    is thus about a tiny-sized network's cost, not recognition of this speech. Whisper small (the default: 12
    layers, 768 dimensions, about 0.5 GB) does roughly ten times tiny's encoder work per 28 s window, and real
    decoding emits tokens: expect recognition to cost several times more per audio minute than here.`
      : `- whisper model ${job.whisperModel}: a real recogniser if its file has weights.`
  }
  ${
    job.testSpeakerModels
      ? `- The speaker models are the tests' hand-made ONNX graphs (a few element-wise operations). Real ones are much
    larger networks: pyannote segmentation-3.0 (SincNet + LSTM, about 1.5 M parameters, a 10 s window stepped
    by 1 s) and 3D-Speaker ERes2Net (a ResNet of several million parameters over 80-bin filterbanks, run once per
    window and speaker active in it). Diarization would then cost much more per audio minute than here; the
    figures above are sherpa-onnx's own work around the models (windowing, filterbanks, clustering) plus
    reading the whole file. The test segmentation window is 1 s (10 model calls per audio second, each trivial)
    where pyannote's is 10 s (1 call per audio second, each a real network).`
      : `- speaker models ${job.segmentation} and ${job.embedding}.`
  }
  - Memory: diarizeFile holds the whole recording as Float32 (3.8 MB per audio minute) and sherpa-onnx copies it
    once more, whatever the models; real models add their own size and onnxruntime's working memory
    (Whisper small about 0.5 GB plus about 0.2 GB per window, the speaker models tens of MB).
  - Pass --whisper, --segmentation and --embedding with the real files where they are to measure them the same way.`,
  );
}

async function main() {
  const runs = Number(opts.runs);
  const minutes = Number(opts.minutes);
  const threads = Number(opts.threads);
  if (!(runs >= 1 && minutes > 0 && threads >= 1)) throw new Error("--runs ≥ 1, --minutes > 0, --threads ≥ 1");
  if (Boolean(opts.segmentation) !== Boolean(opts.embedding))
    throw new Error("--segmentation and --embedding go together");
  const models = path.resolve(opts.models);
  const whisperModel = path.resolve(models, opts.whisper);
  const vadModel = path.resolve(models, opts.vad);
  for (const file of [whisperModel, vadModel])
    if (!fs.existsSync(file)) throw new Error(`${file} is missing (--models <dir>, --whisper, --vad)`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-speakers-"));
  const children = new Set();
  const onSignal = (signal) => {
    for (const child of children) child.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const bundleFile = await bundle(path.join(dir, "bundle"));
    const lib = await import(pathToFileURL(bundleFile).href);
    const audio = path.join(dir, "audio");
    fs.mkdirSync(audio);
    console.log(`making about ${minutes} minutes of consultation with espeak-ng and sox…`);
    const consultation = await makeConsultation(lib, audio, minutes * 60);
    const testSpeakerModels = !opts.segmentation;
    const speakerModels = testSpeakerModels
      ? await lib.writeSpeakerModels(audio)
      : { segmentation: path.resolve(opts.segmentation), embedding: path.resolve(opts.embedding) };
    const job = {
      bundle: bundleFile,
      wav: consultation.file,
      warmup: consultation.warmup,
      seconds: consultation.seconds,
      turns: consultation.turns,
      whisperModel,
      vadModel,
      segmentation: speakerModels.segmentation,
      embedding: speakerModels.embedding,
      testSpeakerModels,
      threads,
      runs,
    };
    console.log(`measuring without speakers (${runs} runs plus a warm-up)…`);
    const plain = await runChild({ ...job, mode: "plain" }, path.join(dir, "plain.log"), children);
    console.log(`measuring with speakers…`);
    const speakers = await runChild({ ...job, mode: "speakers" }, path.join(dir, "speakers.log"), children);
    let random;
    if (!opts["no-random"]) {
      console.log(`measuring the whole engine with a random-weight whisper model…`);
      random = await runChild({ ...job, mode: "random" }, path.join(dir, "random.log"), children);
    }
    report(job, consultation, plain, speakers, random);
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
