#!/usr/bin/env node
// The product's own overhead around a speech engine, through the built app and the JSON API: how long after
// an upload is finished the engine is called, and how long after the engine has answered the transcript is
// visible to the client. The engine is the tests' protocol-faithful Speechmatics server
// (tests/support/fake-speechmatics.ts, run in this process), which finishes every job at once, so what is
// left is the app's own work. A bench prints figures; it is not a test (exit 1 only when a run fails).
//
// Per run: get-upload-url → PUT → update-file-metadata (t_upload_done: its answer arrives), POST
// transcribe_v2, then GET transcribe_v2/{job}/status every 25 ms until `completed` (t_visible: the first
// completed answer). From the fake engine: t_engine_called = the job's createdAt (POST /v2/jobs arrived and
// its multipart body was read), t_engine_returned = when the fake finished answering the transcript GET.
// All times are Date.now() of this one process (the fake runs in it).
//
// Usage: npm run bench:transcription
//        npm run build && node bench/transcription-pipeline.mjs --runs 20 --seconds 30
// Options: --runs <n> (10)  --seconds <audio length> (30)  --warmup <n> (1, not counted)
//          env BENCH_PORT (3420: app, +1 sign-in provider)
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { loadFakeSpeechmatics } from "../scripts/fake-speech-bundle.mjs";
import { benchAppEnv, signIn } from "./support.mjs";

const { values: opts } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    seconds: { type: "string", default: "30" },
    warmup: { type: "string", default: "1" },
  },
});
const RUNS = Number(opts.runs);
const SECONDS = Number(opts.seconds);
const WARMUP = Number(opts.warmup);
if (!(RUNS >= 1 && SECONDS > 0 && WARMUP >= 0)) throw new Error("--runs ≥ 1, --seconds > 0, --warmup ≥ 0");

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PORT = Number(process.env.BENCH_PORT ?? 3420);
const APP = `http://localhost:${PORT}`;
const POLL_MS = 25;
const RUN_TIMEOUT_MS = 60_000;
const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const TEXT =
  "Guten Tag. Der Patient berichtet über Kopfschmerzen seit drei Tagen und leichtes Fieber am Abend. " +
  "Er hat zweimal täglich vierhundert Milligramm Ibuprofen genommen, ohne deutliche Besserung. " +
  "Der Blutdruck liegt bei hundertvierzig zu neunzig, die Temperatur bei achtunddreißig Grad. " +
  "Die Lunge ist frei, das Herz rhythmisch, keine Nackensteifigkeit. " +
  "Wir vermuten einen viralen Infekt und kontrollieren in drei Tagen erneut. ";

/** German speech (espeak-ng), 16 kHz mono 16-bit, exactly `seconds` long (the text repeated, then cut). */
async function makeSpeech(dir, seconds) {
  const raw = path.join(dir, "espeak.wav");
  const out = path.join(dir, "speech.wav");
  await run("espeak-ng", ["-v", "de", "-w", raw, "--", TEXT.repeat(Math.ceil(seconds / 20) + 1)]);
  await run("sox", [raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out, "trim", "0", `${seconds}`]);
  fs.rmSync(raw);
  return out;
}

/** The fake Speechmatics server, bundled as scripts/fake-speech-server.mjs does it. */
async function startFake(dir) {
  const { startFakeSpeechmatics } = await loadFakeSpeechmatics(dir);
  const fake = await startFakeSpeechmatics({ port: 0, host: "127.0.0.1" });
  // The fake records every call and sets `status` when the answer has been written (res "finish"). Watch
  // that assignment to learn when each answer went out (the fake itself keeps no such time).
  fake.requests.push = (...calls) => {
    for (const call of calls) {
      let status = call.status;
      call.arrivedAt = Date.now();
      Object.defineProperty(call, "status", {
        enumerable: true,
        configurable: true,
        get: () => status,
        set(value) {
          status = value;
          if (value !== null && call.answeredAt === undefined) call.answeredAt = Date.now();
        },
      });
    }
    return Array.prototype.push.apply(fake.requests, calls);
  };
  return fake;
}

function startApp(dataDir, fakeUrl) {
  const app = spawn(process.execPath, ["server/index.mjs"], {
    cwd: ROOT,
    env: benchAppEnv({
      port: PORT,
      dataDir,
      env: {
        SPEECH_ENGINE: "speechmatics",
        SPEECHMATICS_API_KEY: "test-key",
        SPEECHMATICS_BATCH_URL: fakeUrl,
        AUTO_START_TRANSCRIPTION: "false",
        WORKER_IN_PROCESS: "true",
      },
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Kept for a failure report; server/index.mjs logs every request on stdout.
  let log = "";
  const keep = (chunk) => (log = (log + chunk).slice(-8_000));
  app.stdout.setEncoding("utf8").on("data", keep);
  app.stderr.setEncoding("utf8").on("data", keep);
  const exited = new Promise((resolve) => app.once("exit", (code, signal) => resolve({ code, signal })));
  return { process: app, exited, log: () => log };
}

async function stopApp(app) {
  if (app.process.exitCode !== null || app.process.signalCode !== null) return;
  app.process.kill("SIGTERM");
  const timer = setTimeout(() => app.process.kill("SIGKILL"), 20_000);
  await app.exited;
  clearTimeout(timer);
}

async function waitForApp(app) {
  let gone = false;
  void app.exited.then(() => (gone = true));
  for (let i = 0; i < 300; i++) {
    if (gone) throw new Error(`the app exited while starting:\n${app.log()}`);
    const ok = await fetch(`${APP}/resources/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`the app did not answer /resources/healthz within 30 s:\n${app.log()}`);
}

function api(cookie) {
  const call = async (method, p, body) => {
    const response = await fetch(`${APP}${p}`, {
      method,
      headers: { cookie, origin: APP, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${p} → ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  return { get: (p) => call("GET", p), post: (p, body) => call("POST", p, body) };
}

/** One upload → transcript, timed. */
async function oneRun(client, fake, audio, index) {
  const slot = await client.post("/api/get-upload-url", {
    file_name: `bench-${index}.wav`,
    file_type: "audio/wav",
    language_code: "de",
  });
  const put = await fetch(slot.url, { method: "PUT", headers: { "content-type": "audio/wav" }, body: audio });
  if (!put.ok) throw new Error(`PUT → ${put.status}`);
  const checked = await client.post("/api/update-file-metadata", { s3_key: slot.key, metadata: {} });
  if (!checked.success) throw new Error(`update-file-metadata: ${JSON.stringify(checked)}`);
  const uploadDone = Date.now();
  const jobsBefore = fake.jobs.length;
  const callsBefore = fake.requests.length;

  const { job_name: jobName } = await client.post("/api/transcribe_v2", { s3_key: slot.key });
  const requestAnswered = Date.now();
  let status;
  for (;;) {
    status = await client.get(`/api/transcribe_v2/${encodeURIComponent(jobName)}/status`);
    if (status.status === "completed") break;
    if (status.status === "failed") throw new Error(`transcription failed: ${status.error}`);
    if (Date.now() - uploadDone > RUN_TIMEOUT_MS) throw new Error(`no transcript after ${RUN_TIMEOUT_MS / 1000} s`);
    await sleep(POLL_MS);
  }
  const visible = Date.now();

  const jobs = fake.jobs.slice(jobsBefore);
  if (jobs.length !== 1) throw new Error(`expected one engine job for this run, the fake got ${jobs.length}`);
  const [job] = jobs;
  const served = fake.requests.find((r) => r.route === "transcript" && r.jobId === job.id && r.status === 200);
  if (!served?.answeredAt) throw new Error(`the fake never served job ${job.id}'s transcript`);
  const create = fake.requests.slice(callsBefore).find((r) => r.route === "create" && r.status === 201);
  // Not timed: the transcript is really there.
  const transcript = await client.get(`/api/transcript_v2/${encodeURIComponent(status.transcript_key)}`);
  if (!transcript.words?.length) throw new Error("the stored transcript has no words");

  const engineCalled = job.createdAt.getTime();
  const engineReturned = served.answeredAt;
  return {
    toEngine: engineCalled - uploadDone,
    request: requestAnswered - uploadDone,
    wavToEngine: create ? engineCalled - create.arrivedAt : NaN,
    engine: engineReturned - engineCalled,
    toVisible: visible - engineReturned,
    total: visible - uploadDone,
    uploadedBytes: job.dataFile?.size ?? 0,
  };
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const COLUMNS = [
  ["toEngine", "upload finished → engine called (POST /v2/jobs read by the engine)"],
  ["request", "of which until POST transcribe_v2 answered"],
  ["wavToEngine", "of which the engine sending the WAV (POST /v2/jobs arrived → body read)"],
  ["engine", "fake engine: called → returned"],
  ["toVisible", "engine returned (transcript GET answered) → transcript visible (first completed status)"],
  ["total", "total: upload finished → visible"],
];

function report(results, audioBytes) {
  const cell = (v) => String(Math.round(v)).padStart(8);
  console.log(
    `\nTranscription pipeline overhead: ${results.length} runs, ${SECONDS} s of German speech ` +
      `(${(audioBytes / 1024).toFixed(0)} KiB WAV), engine = fake Speechmatics answering at once. Times in ms.\n`,
  );
  const header = ["", "A", "A.req", "A.wav", "engine", "B", "total"];
  console.log(`  ${header.map((h, i) => (i === 0 ? h.padEnd(7) : h.padStart(9))).join("")}`);
  results.forEach((r, i) =>
    console.log(`  ${`run ${i + 1}`.padEnd(7)}${COLUMNS.map(([key]) => ` ${cell(r[key])}`).join("")}`),
  );
  const stat = (key, p) => {
    const column = results.map((r) => r[key]);
    return percentile(column, p);
  };
  for (const [label, p] of Object.entries({ median: 50, p95: 95 }))
    console.log(`  ${label.padEnd(7)}${COLUMNS.map(([key]) => ` ${cell(stat(key, p))}`).join("")}`);
  console.log("");
  COLUMNS.forEach(([, label], i) => console.log(`  ${header[i + 1].padEnd(7)}${label}`));
  console.log(`  p95 is the nearest rank (with fewer than 20 runs it is the slowest run). Machine load average
  ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores: other work on the machine shows up in every span.

What each span includes:
  A, upload finished → engine called: POST transcribe_v2 (job row and pg-boss wake-up in one transaction); the
    in-process worker picking the job up (pg-boss polls every 1 s, so 0–1 s of this is waiting; the runs are
    spaced by a random 0–1 s so they do not all land at the same phase); claiming the job; copying the upload
    from storage to a temp file; one ffmpeg run converting it to 16 kHz mono WAV; then the engine
    posting the WAV to POST /v2/jobs until the fake has read the multipart body (${(results[0].uploadedBytes / 1024).toFixed(0)} KiB).
  fake engine: status poll (the job is done at once) and the transcript GET — the vendor's time, not ours.
  B, engine returned → transcript visible: json-v2 → words, DELETE of the job at the vendor, the engine-time
    marks and usage record, building the transcript, storing its JSON, the settle transaction (transcript,
    job, recording); then up to ${POLL_MS} ms until the next status poll plus that request.`);
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-transcription-"));
  let fake;
  let app;
  const cleanup = async () => {
    if (app) await stopApp(app).catch(() => undefined);
    if (fake) await fake.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal) => {
    void cleanup().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const wavFile = await makeSpeech(dir, SECONDS);
    const audio = fs.readFileSync(wavFile);
    fake = await startFake(path.join(dir, "fake"));
    app = startApp(path.join(dir, "app"), fake.url);
    await waitForApp(app);
    const client = api(await signIn(APP, "anna-berger"));

    const results = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      await sleep(Math.random() * 1000);
      const result = await oneRun(client, fake, audio, i);
      const counted = i >= WARMUP;
      if (counted) results.push(result);
      console.log(
        `  ${counted ? `run ${i - WARMUP + 1}/${RUNS}` : "warm-up (not counted)"}: ${Math.round(result.total)} ms`,
      );
    }
    report(results, audio.length);
  } catch (error) {
    if (app) console.error(`app log (tail):\n${app.log()}`);
    throw error;
  } finally {
    await cleanup();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
