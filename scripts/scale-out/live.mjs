// The live recording over the WebSocket door, as the recorder makes it: the instance holding the run is stopped
// mid-recording, the client reconnects through nginx and resumes from the server's last_seq_no.
import pg from "pg";
import WebSocket from "ws";
import { APP, LIVE_SIGNAL, sleep } from "./config.mjs";
import { call, cookie, say } from "./client.mjs";
import { baseEnv, pids, startInstance } from "./instances.mjs";
import { nginxLog } from "./nginx.mjs";
import { cleanups, stopProcess, waitFor } from "./processes.mjs";
import { ProofError, caveats, check, current, endStep, note, step } from "./report.mjs";

// Live audio: stretches of a tone (the fake realtime engine hears each as one line of its script) and silence,
// as 16 kHz mono s16le in the recorder's 4096-sample buffers.

const STRETCHES = 8;
const SPEECH_S = 1.4;
const PAUSE_S = 0.9;
function liveBuffers(stretches) {
  const rate = 16_000;
  const parts = [];
  for (let s = 0; s < stretches; s++) {
    const tone = Buffer.alloc(Math.round(SPEECH_S * rate) * 2);
    for (let i = 0; i < tone.length / 2; i++)
      tone.writeInt16LE(Math.round(9000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
    parts.push(tone, Buffer.alloc(Math.round(PAUSE_S * rate) * 2));
  }
  const pcm = Buffer.concat(parts);
  const buffers = [];
  for (let at = 0; at < pcm.length; at += 8192) buffers.push(pcm.subarray(at, at + 8192));
  return buffers;
}

function openLiveSocket(sessionId) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${APP.replace("http", "ws")}/live/ws?session=${sessionId}`, {
      headers: { cookie, origin: APP },
    });
    const messages = [];
    const waiters = [];
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      messages.push(message);
      for (const waiter of [...waiters])
        if (waiter.match(message)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
    });
    const closed = new Promise((done) => socket.on("close", (code) => done(code)));
    socket.on("unexpected-response", (_req, res) => reject(new ProofError(`live socket: HTTP ${res.statusCode}`)));
    socket.on("error", reject);
    socket.on("open", () =>
      resolve({
        socket,
        messages,
        closed,
        next: (match, timeoutMs = 20_000) => {
          const seen = messages.find(match);
          if (seen) return Promise.resolve(seen);
          return new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new ProofError("live socket: no answer in time")), timeoutMs);
            waiters.push({
              match,
              resolve: (m) => {
                clearTimeout(timer);
                done(m);
              },
            });
            closed.then((code) => fail(new ProofError(`live socket closed (${code})`)));
          });
        },
      }),
    );
  });
}

// ---------------------------------------------------------------------------------------------------------

/** The live recording, its holder stopped by LIVE_SIGNAL; returns the database client the last step uses. */
export async function liveRecording() {
  step(`live recording over the WebSocket door; ${LIVE_SIGNAL} to the instance holding it, mid-recording`);
  await sleep(2_500);
  const buffers = liveBuffers(STRETCHES);
  const created = await call("POST", "/live/sessions", { json: { kind: "recording", language: "de" }, expect: [201] });
  say("POST", "/live/sessions", created);
  const sessionId = created.data.id;
  const db = new pg.Client({ connectionString: baseEnv.DATABASE_URL });
  await db.connect();
  cleanups.push(() => db.end());
  const START = {
    message: "StartRecognition",
    audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
    transcription_config: { language: "de" },
  };
  let lastN = 0;
  const track = (live) =>
    live.socket.on("message", (data) => (lastN = Math.max(lastN, JSON.parse(String(data)).n ?? 0)));
  let live = await openLiveSocket(sessionId);
  track(live);
  live.socket.send(JSON.stringify({ ...START, last_n: 0 }));
  const first = await live.next((m) => m.message === "RecognitionStarted");
  const runner = async () =>
    (await db.query("select runner_instance from live_sessions where id = $1", [sessionId])).rows[0]?.runner_instance;
  const holder = pids.get(Number((await runner()).split(":")[1]));
  note(`socket 1 open; RecognitionStarted (last_seq_no ${first.last_seq_no}); the run is on ${holder}`);
  const half = Math.floor(buffers.length / 2) + 3; // inside a stretch of speech, not at a pause
  let acked = 0;
  for (let i = 0; i < half; i++) {
    live.socket.send(buffers[i]);
    await sleep(20);
  }
  await live.next((m) => m.message === "AudioAdded" && m.seq_no === half);
  acked = half;
  const finalsBefore = live.messages.filter((m) => m.message === "AddTranscript").length;
  const stopLive = await stopProcess(holder, LIVE_SIGNAL, undefined, "mid-recording");
  const closeCode = await live.closed;
  note(
    `${holder} stopped by ${LIVE_SIGNAL} after ${acked} of ${buffers.length} buffers (${finalsBefore} finals so far): ` +
      `exit after ${stopLive.ms} ms, socket closed ${closeCode}`,
  );
  live = await openLiveSocket(sessionId);
  track(live);
  live.socket.send(JSON.stringify({ ...START, last_n: lastN }));
  const resumed = await live.next((m) => m.message === "RecognitionStarted");
  const holderNow = async () => pids.get(Number((await runner())?.split(":")[1]));
  const newHolder = await waitFor(
    "another instance taking the recording over",
    async () => {
      const now = await holderNow();
      return now && now !== holder ? now : undefined;
    },
    { timeoutMs: 45_000, everyMs: 500 },
  ).catch((error) => {
    throw new ProofError(`${error.message}: the recording has no run on a living instance`);
  });
  note(
    `socket 2 open; RecognitionStarted: the server holds ${resumed.last_seq_no} buffers; the run is on ${newHolder}`,
  );
  check(resumed.last_seq_no === acked, `the server holds ${resumed.last_seq_no} buffers, ${acked} were acknowledged`);
  check(newHolder && newHolder !== holder, "no other instance took the recording over");
  for (let i = resumed.last_seq_no; i < buffers.length; i++) {
    live.socket.send(buffers[i]);
    await sleep(20);
  }
  live.socket.send(JSON.stringify({ message: "EndOfStream", last_seq_no: buffers.length }));
  await live.next((m) => m.message === "EndOfTranscript", 30_000);
  live.socket.close(1000);
  const liveMessages = await call("GET", `/live/sessions/${sessionId}`);
  say("GET", "/live/sessions/…", liveMessages);
  const view = liveMessages.data;
  note(
    `the session holds ${view.buffers} of ${buffers.length} buffers (${view.seconds} s), ${view.transcript.length} speaker turns`,
  );
  check(view.buffers === buffers.length, `buffers lost: ${view.buffers} of ${buffers.length}`);
  const upgrades = nginxLog(/^\/live\/ws$/);
  note(`nginx passed the upgrades to ${upgrades.map((u) => u.upstreams.join("→")).join(", ")} (socket 1, socket 2)`);
  for (const upgrade of upgrades) current.served[upgrade.upstreams.at(-1)] += 1;
  // How much of each stretch of speech the transcript covers (its words' times against the audio's).
  const coverage = [];
  for (let k = 0; k < STRETCHES; k++) {
    const from = k * (SPEECH_S + PAUSE_S);
    const to = from + SPEECH_S;
    let covered = 0;
    for (const turn of view.transcript) covered += Math.max(0, Math.min(to, turn.end) - Math.max(from, turn.start));
    coverage.push(Math.min(1, covered / SPEECH_S));
  }
  note(
    `transcript covers the ${STRETCHES} stretches of speech: ${coverage.map((c) => `${Math.round(c * 100)}%`).join(" ")}`,
  );
  const cut = coverage.findIndex((c) => c < 0.9);
  if (cut >= 0) {
    const at = cut * (SPEECH_S + PAUSE_S);
    caveats.push(
      `live: the words spoken at the stop (stretch ${cut + 1}, ${at.toFixed(1)}–${(at + SPEECH_S).toFixed(1)} s, ` +
        `${Math.round(coverage[cut] * 100)}% in the transcript) were not recognised — the stopped run's engine ` +
        `had not finalised them and the new run starts after the buffers already held; the audio is complete`,
    );
  }
  check(
    coverage.filter((c) => c < 0.9).length <= 1,
    `more than the stretch at the stop is missing from the transcript: ${coverage.join()}`,
  );
  const savedLive = await call("POST", `/live/sessions/${sessionId}/save`, {
    json: { template_id: "entlassbrief", transcription_mode: "transcript_and_letter", audio_copy: false },
  });
  say("POST", "/live/sessions/…/save", savedLive);
  const liveKeys = [savedLive.data.recording_key, savedLive.data.audio_key];
  const liveLetter = await waitFor(
    "the live recording's letter",
    async () => {
      const r = await call("GET", "/api/arztbriefe");
      const found = r.data.arztbriefe.find((l) => liveKeys.includes(l.metadata?.source_key));
      if (found?.status === "failed") throw new ProofError("the live recording's letter failed");
      return found?.status === "completed" && found;
    },
    { everyMs: 250 },
  );
  note(`live recording saved (${liveKeys[0]}); its letter ${liveLetter.key} completed`);
  await startInstance(holder);
  endStep();
  return db;
}
