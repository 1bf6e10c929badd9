#!/usr/bin/env node
// The live door's figures (issue 7), through the built app: the uplink bitrate a recording needs, and the lag
// from a word's audio being sent to its final arriving back, relayed to the tests' protocol-faithful
// Speechmatics realtime server (tests/support/fake-speechmatics-rt.ts, run in this process). Speech is sent at
// real-time pace in the recorder's 4096-sample 16-bit buffers over the WebSocket door and over the HTTP door.
// A bench prints figures; it is not a test (exit 1 only when a run fails). Goal: lag ≤ max_delay + 0.5 s.
//
// Lag of a final = when it arrived − when the buffer holding the end of its last word was sent.
//
// Usage: npm run bench:live
//        npm run build && node bench/live-relay.mjs --seconds 30 --kind recording
//        npm run build && node bench/live-relay.mjs --seconds 2700 --doors websocket --save   (a 45-minute session)
// Options: --seconds <speech length> (30)  --kind recording|dictation (recording)
//          --doors websocket|http|both (both)  --save: afterwards compare what the server holds with what was
//          sent, save the session as a recording (timed), and print the app's peak memory
//          env BENCH_PORT (3440: app, +1 sign-in provider)
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import WebSocket from "ws";
import { loadFakeSpeechmaticsRt } from "../scripts/fake-speech-bundle.mjs";
import { benchAppEnv, signIn, waitForApp } from "./support.mjs";

const { values: opts } = parseArgs({
  options: {
    seconds: { type: "string", default: "30" },
    kind: { type: "string", default: "recording" },
    doors: { type: "string", default: "both" },
    save: { type: "boolean", default: false },
  },
});
const SECONDS = Number(opts.seconds);
const KIND = opts.kind;
const MAX_DELAY = KIND === "dictation" ? 1 : 3;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PORT = Number(process.env.BENCH_PORT ?? 3440);
const APP = `http://localhost:${PORT}`;
const BUFFER_SAMPLES = 4096;
const BUFFER_SECONDS = BUFFER_SAMPLES / 16_000;
const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function speechBuffers(dir) {
  const lines = ["Guten Tag, was führt Sie heute zu mir?", "Ich habe seit drei Tagen Kopfschmerzen und Fieber."];
  const parts = [];
  for (let i = 0; parts.length === 0 || Buffer.concat(parts).length < SECONDS * 32_000; i++) {
    const raw = path.join(dir, `l${i}.wav`);
    const out = path.join(dir, `s${i}.wav`);
    await run("espeak-ng", ["-v", "de", "-w", raw, "--", lines[i % 2]]);
    await run("sox", [raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out]);
    parts.push(fs.readFileSync(out).subarray(44), Buffer.alloc(1.5 * 32_000));
  }
  const pcm = Buffer.concat(parts).subarray(0, SECONDS * 32_000);
  const buffers = [];
  for (let at = 0; at < pcm.length; at += BUFFER_SAMPLES * 2) buffers.push(pcm.subarray(at, at + BUFFER_SAMPLES * 2));
  return buffers;
}

function startApp(dataDir, rtUrl) {
  const app = spawn(process.execPath, ["server/index.mjs"], {
    cwd: ROOT,
    env: benchAppEnv({
      port: PORT,
      dataDir,
      env: { SPEECH_LIVE_ENGINE: "speechmatics", SPEECHMATICS_API_KEY: "test-key", SPEECHMATICS_RT_URL: rtUrl },
    }),
    stdio: ["ignore", "ignore", "inherit"],
  });
  return app;
}

async function newSession(cookie) {
  const response = await fetch(`${APP}/live/sessions`, {
    method: "POST",
    headers: { cookie, "content-type": "application/json", origin: APP },
    body: JSON.stringify({ kind: KIND, language: "de" }),
  });
  if (response.status !== 201) throw new Error(`POST /live/sessions: ${response.status}`);
  return (await response.json()).id;
}

const START = {
  message: "StartRecognition",
  audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
  transcription_config: { language: "de" },
};

let appPid = 0;
/** Every 5 minutes of audio: how far a long session has come (a long run that is cut short still says something). */
function progress(sent, lags) {
  const every = Math.round(300 / BUFFER_SECONDS);
  if (sent % every !== 0) return;
  const recent = lags.slice(-20).sort((a, b) => a - b);
  console.log(
    `  … ${((sent * BUFFER_SECONDS) / 60).toFixed(0)} min sent, ${lags.length} finals, ` +
      `recent median lag ${recent[Math.floor(recent.length / 2)]?.toFixed(2)} s, app memory ${memory(appPid, "VmRSS")}`,
  );
}

/** Lag of each final, given when each buffer was sent (wall clock) and when the final arrived. */
function lagOf(message, sentAt, arrived) {
  const words = message.results.filter((r) => r.type === "word");
  if (words.length === 0) return undefined;
  const end = words.at(-1).end_time;
  const buffer = Math.min(sentAt.length - 1, Math.floor(end / BUFFER_SECONDS));
  return (arrived - sentAt[buffer]) / 1000;
}

async function overWebSocket(cookie, buffers) {
  const id = await newSession(cookie);
  const socket = new WebSocket(`${APP.replace("http", "ws")}/live/ws?session=${id}`, {
    headers: { cookie, origin: APP },
  });
  const sentAt = [];
  const lags = [];
  let bytes = 0;
  const done = new Promise((resolve, reject) => {
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.message === "AddTranscript") {
        const lag = lagOf(message, sentAt, Date.now());
        if (lag !== undefined) lags.push(lag);
      } else if (message.message === "EndOfTranscript") resolve();
      else if (message.message === "Error") reject(new Error(`${message.type}: ${message.reason}`));
    });
    socket.on("error", reject);
  });
  await new Promise((resolve, reject) => socket.on("open", resolve).on("error", reject));
  const started = new Promise((resolve) => socket.once("message", resolve));
  socket.send(JSON.stringify(START));
  await started;
  const t0 = Date.now();
  for (let i = 0; i < buffers.length; i++) {
    // Real-time pace: buffer i leaves when its audio has been "spoken".
    await sleep(Math.max(0, t0 + (i + 1) * BUFFER_SECONDS * 1000 - Date.now()));
    socket.send(buffers[i]);
    bytes += buffers[i].length + 6; // a masked binary frame's header
    sentAt.push(Date.now());
    progress(i + 1, lags);
  }
  socket.send(JSON.stringify({ message: "EndOfStream", last_seq_no: buffers.length }));
  await done;
  socket.close(1000);
  return { id, lags, bytes };
}

async function overHttp(cookie, buffers) {
  const id = await newSession(cookie);
  const headers = { cookie, origin: APP };
  const post = (what, body, type = "application/json") =>
    fetch(`${APP}/live/sessions/${id}/${what}`, {
      method: "POST",
      headers: { ...headers, "content-type": type },
      body,
    });
  await post("start", JSON.stringify(START));
  const events = await fetch(`${APP}/live/sessions/${id}/events`, { headers });
  const sentAt = [];
  const lags = [];
  let bytes = 0;
  const done = (async () => {
    const reader = events.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) return;
      text += decoder.decode(value, { stream: true });
      for (let cut; (cut = text.indexOf("\n\n")) >= 0; text = text.slice(cut + 2)) {
        const data = text
          .slice(0, cut)
          .split("\n")
          .find((l) => l.startsWith("data: "));
        if (!data) continue;
        const message = JSON.parse(data.slice(6));
        if (message.message === "AddTranscript") {
          const lag = lagOf(message, sentAt, Date.now());
          if (lag !== undefined) lags.push(lag);
        } else if (message.message === "EndOfTranscript") return void (await reader.cancel());
      }
    }
  })();
  const t0 = Date.now();
  for (let i = 0; i < buffers.length; i++) {
    await sleep(Math.max(0, t0 + (i + 1) * BUFFER_SECONDS * 1000 - Date.now()));
    const path = `audio?seq=${i + 1}`;
    const response = await post(path, buffers[i], "application/octet-stream");
    if (!response.ok) throw new Error(`audio ${i + 1}: ${response.status}`);
    // What goes up the wire: the request line and headers as sent, plus the body.
    bytes += buffers[i].length + `POST /live/sessions/${id}/${path} HTTP/1.1\r\n`.length + 200 + cookie.length;
    sentAt.push(Date.now());
  }
  await post("end", JSON.stringify({ message: "EndOfStream", last_seq_no: buffers.length }));
  await done;
  return { id, lags, bytes };
}

function report(name, { lags, bytes }, seconds) {
  const sorted = [...lags].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  console.log(
    `${name}: uplink ${((bytes * 8) / seconds / 1000).toFixed(1)} kbit/s; lag to final over ${lags.length} finals: ` +
      `median ${at(0.5)?.toFixed(2)} s, p95 ${at(0.95)?.toFixed(2)} s, max ${sorted.at(-1)?.toFixed(2)} s ` +
      `(goal ≤ ${(MAX_DELAY + 0.5).toFixed(1)} s)`,
  );
}

/** What the server holds of the session against what was sent; then the save, timed, as the recorder makes it. */
async function checkAndSave(cookie, id, buffers) {
  const headers = { cookie, origin: APP, "content-type": "application/json" };
  const view = await (await fetch(`${APP}/live/sessions/${id}`, { headers })).json();
  const words = view.transcript.reduce((sum, s) => sum + s.text.split(/\s+/).filter(Boolean).length, 0);
  console.log(
    `  server holds ${view.buffers} of ${buffers.length} buffers sent (${view.seconds.toFixed(1)} s), ` +
      `${view.transcript.length} speaker turns, ${words} words`,
  );
  if (!opts.save) return;
  const t0 = Date.now();
  const response = await fetch(`${APP}/live/sessions/${id}/save`, {
    method: "POST",
    headers,
    body: JSON.stringify({ template_id: "entlassbrief", transcription_mode: "transcript", audio_copy: false }),
  });
  const saved = await response.json();
  if (!response.ok) throw new Error(`save: ${response.status} ${JSON.stringify(saved)}`);
  const { files } = await (await fetch(`${APP}/api/files`, { headers })).json();
  const file = files.find((f) => f.key === saved.audio_key);
  const audio = await fetch(`${APP}/api/audio-playback/${saved.audio_key}`, { headers }).then((r) => r.json());
  const size = audio.playback_url ? (await fetch(audio.playback_url, { headers })).headers.get("content-length") : 0;
  console.log(
    `  saved in ${((Date.now() - t0) / 1000).toFixed(1)} s: transcript ${file?.transcriptionStatus}, ` +
      `audio ${file?.metadata.duration} s in ${(Number(size) / 1024 / 1024).toFixed(1)} MiB (${file?.metadata.original_mime_type})`,
  );
}

/** The app's resident memory (Linux), in MiB: VmRSS now, VmHWM the peak. */
function memory(pid, field) {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? `${(Number(kb) / 1024).toFixed(0)} MiB` : "unknown";
  } catch {
    return "unknown";
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-live-"));
const { startFakeSpeechmaticsRt } = await loadFakeSpeechmaticsRt(path.join(dir, "fake"));
const fake = await startFakeSpeechmaticsRt({ host: "127.0.0.1" });
const app = startApp(path.join(dir, "data"), fake.url);
appPid = app.pid;
try {
  const buffers = await speechBuffers(dir);
  await waitForApp(APP);
  const cookie = await signIn(APP, "anna-berger");
  const seconds = buffers.length * BUFFER_SECONDS;
  console.log(`${KIND}, ${seconds.toFixed(1)} s of speech sent at real-time pace, max_delay ${MAX_DELAY} s`);
  if (opts.doors !== "http") {
    const result = await overWebSocket(cookie, buffers);
    report("WebSocket", result, seconds);
    await checkAndSave(cookie, result.id, buffers);
  }
  if (opts.doors !== "websocket") {
    const result = await overHttp(cookie, buffers);
    report("HTTP", result, seconds);
    await checkAndSave(cookie, result.id, buffers);
  }
  console.log(`app peak memory (VmHWM): ${memory(app.pid, "VmHWM")}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  app.kill("SIGTERM");
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
