import { LIVE_SAMPLE_RATE, LIVE_SETTINGS } from "~/live/protocol";
import {
  deleteLivePartials,
  findLiveSessionById,
  readLiveAudio,
  type LiveSessionRow,
} from "~/models/live-session.server";
import { engineVocabulary } from "../transcription/user-vocabulary.server";
import { subscribe, wake, type AudioWake } from "./bus.server";
import { getLiveEngine } from "./engine.server";
import { LiveEngineError, type LiveEngineMessage } from "./engine-types";
import { meterRun, publish as publishOf, type Run } from "./runner-publish.server";
import { runnerSettings } from "./runner-settings.server";
import {
  claimLiveRunner,
  markRecognisedThrough,
  releaseLiveRunner,
  renewLiveRunner,
  resumeLiveRun,
} from "./runner-store.server";

// The runner of a live session (ADR 0013): the one instance that holds the engine connection for a run. It
// takes the session with a lease it renews, feeds the engine every stored buffer in order — handed over in
// memory when this instance stored it, read from live_audio when another instance did — and publishes what the
// engine says, shifted onto the session's time line. A run starts (StartRecognition) or takes over from an
// instance that stopped renewing its lease (runner-takeover.server.ts); either way it re-feeds from the end of
// what is final, not from what was stored (runner-timeline.ts drops what it says again). A run ends on
// EndOfTranscript, on an engine error, when the lease is lost, or after IDLE_END_MS without audio (the client
// went away without EndOfStream; what it sent is recognised and kept, and the session can be continued or saved).

const IDLE_END_MS = 60_000;
/** After EndOfStream the engine must finish within max_delay plus this, or the run is closed for it. */
const END_GRACE_MS = 10_000;

const runs = new Map<string, Run>();

const publish = (run: Run, message: LiveEngineMessage) => publishOf(run, message, () => void finish(run));

function stop(run: Run) {
  run.finished = true;
  runs.delete(run.session.id);
  for (const timer of Object.values(run.timers)) clearTimeout(timer);
  for (const unsubscribe of run.stops) unsubscribe();
  run.engine?.close();
}

/** Ends the run: its bookkeeping first, then its last message (EndOfTranscript, Error), then the release. */
async function finish(run: Run, outcome: { errorType?: string; errorReason?: string } = {}, last?: LiveEngineMessage) {
  if (run.finished) return;
  stop(run);
  const id = run.session.id;
  try {
    await run.publishing;
    const fedTo = run.startSamples + run.fedSamples;
    if (run.complete) await markRecognisedThrough(id, run.instance, run.nextSeq - 1, fedTo);
    await meterRun(run);
    if (last) await publish(run, last);
    if (await releaseLiveRunner(id, run.instance, outcome)) await deleteLivePartials(id);
    await wake("messages", id);
  } catch (error) {
    console.warn("[live] cannot finish a run:", error instanceof Error ? error.message : error);
  }
}

function onEngineMessage(run: Run, message: LiveEngineMessage) {
  if (run.finished) return;
  if (message.message === "Error") void finish(run, { errorType: message.type, errorReason: message.reason }, message);
  else if (message.message === "EndOfTranscript") {
    run.complete = run.endSent;
    void finish(run, {}, message);
  } else void publish(run, message);
}

function armIdle(run: Run) {
  clearTimeout(run.timers.idle);
  if (run.endSeq !== null) return;
  run.timers.idle = setTimeout(() => {
    run.endSeq = run.nextSeq - 1;
    void feed(run);
  }, IDLE_END_MS);
  run.timers.idle.unref();
}

function sendEnd(run: Run) {
  if (run.endSent || run.endSeq === null || run.nextSeq <= run.endSeq) return;
  run.endSent = true;
  clearTimeout(run.timers.idle);
  run.engine?.end();
  const maxDelay = LIVE_SETTINGS[run.session.kind].maxDelay;
  run.timers.end = setTimeout(
    () => {
      void publish(run, { message: "Warning", type: "end_timeout", reason: "The engine did not finish in time" });
      void finish(run, {}, { message: "EndOfTranscript" });
    },
    maxDelay * 1000 + END_GRACE_MS,
  );
  run.timers.end.unref();
}

function give(run: Run, pcm: Buffer) {
  if (!run.engine) return;
  run.engine.addAudio(pcm);
  run.fedSamples += pcm.length / 2;
}

/** Feeds every stored buffer from nextSeq on; one loop at a time per run. */
async function feed(run: Run) {
  if (run.feeding) {
    run.again = true;
    return;
  }
  run.feeding = true;
  try {
    do {
      run.again = false;
      for (;;) {
        const rows = await readLiveAudio(run.session.id, run.nextSeq);
        for (const row of rows) {
          if (run.finished) return;
          give(run, row.pcm);
          run.nextSeq = row.seq + 1;
        }
        if (rows.length < 64) break;
      }
      sendEnd(run);
    } while (run.again && !run.finished);
  } catch (error) {
    console.warn("[live] cannot read audio:", error instanceof Error ? error.message : error);
  } finally {
    run.feeding = false;
  }
}

function onAudio(run: Run, audio?: AudioWake) {
  if (run.finished) return;
  armIdle(run);
  // The buffer this instance just stored, handed over in memory when it is the next one.
  if (audio && audio.seq === run.nextSeq && !run.feeding) {
    give(run, audio.pcm);
    run.nextSeq += 1;
    sendEnd(run);
    return;
  }
  void feed(run);
}

async function onControl(run: Run) {
  const session = await findLiveSessionById(run.session.id);
  if (!session || session.status === "discarded" || session.status === "saved") return void finish(run);
  if (session.end_seq !== null && run.endSeq === null) {
    run.endSeq = session.end_seq;
    void feed(run);
  }
}

/** Whether this instance runs the session now. */
export function runsHere(sessionId: string) {
  return runs.has(sessionId);
}

/**
 * Makes sure a run serves the session: this instance starts one unless a run is already open (here, or on
 * another instance whose lease holds). A takeover continues a running or ending session whose runner stopped
 * renewing its lease. Resolves whether a run serves it from here; rejects with LiveEngineError when the engine
 * cannot start (a takeover publishes that as an Error instead, since no client is waiting on it).
 */
export async function ensureRun(session: LiveSessionRow, mode: "start" | "takeover" = "start"): Promise<boolean> {
  if (runs.has(session.id)) return true;
  const { instance, leaseMs, heartbeatMs, resumeLeadSamples } = runnerSettings;
  const claim = await claimLiveRunner(session.id, instance, leaseMs, mode);
  if (!claim) return false; // another instance runs it; audio reaches it through the table and NOTIFY
  const from = await resumeLiveRun(session.id, instance, claim, resumeLeadSamples);
  const recognised = Number(claim.recognised_samples);
  const run: Run = {
    session,
    instance,
    startSamples: from.start,
    fedSamples: 0,
    offsetSeconds: from.start / LIVE_SAMPLE_RATE,
    finalUntil: recognised > from.start ? recognised / LIVE_SAMPLE_RATE : null,
    nextSeq: from.seq,
    endSeq: mode === "takeover" ? claim.end_seq : null,
    endSent: false,
    complete: false,
    feeding: false,
    again: false,
    finished: false,
    publishing: Promise.resolve(),
    timers: {},
    stops: [],
  };
  runs.set(session.id, run);
  try {
    run.engine = await getLiveEngine().start({
      kind: session.kind,
      language: session.language,
      vocabulary: await engineVocabulary({ userId: session.owner_id, language: session.language }),
      emit: (message) => onEngineMessage(run, message),
      onClose: () => {
        if (!run.finished && !run.endSent)
          onEngineMessage(run, { message: "Error", type: "connection_lost", reason: "The engine closed the stream" });
      },
    });
  } catch (error) {
    const failure =
      error instanceof LiveEngineError
        ? error
        : new LiveEngineError("engine_unavailable", String(error), { cause: error });
    const outcome = { errorType: failure.type, errorReason: failure.message };
    const notice = { message: "Error" as const, type: failure.type, reason: failure.message };
    await finish(run, outcome, mode === "takeover" ? notice : undefined);
    if (mode === "takeover") return false;
    throw failure;
  }
  if (run.finished) {
    run.engine.close(); // closed while the engine started
    return false;
  }
  const audio = subscribe("audio", session.id, (wakeUp) => onAudio(run, wakeUp));
  const control = subscribe("control", session.id, () => void onControl(run));
  run.stops.push(audio.stop, control.stop);
  run.timers.heartbeat = setInterval(() => {
    void renewLiveRunner(session.id, instance, leaseMs).then((held) => {
      if (!held) void finish(run, { errorType: "session_timeout", errorReason: "The run lost its lease" });
    });
  }, heartbeatMs);
  run.timers.heartbeat.unref();
  armIdle(run);
  await Promise.all([audio.ready, control.ready]);
  // Audio stored before the subscription (from the resume point on).
  void feed(run);
  return true;
}

/** Closes this instance's run of a session at once (discard). */
export async function closeRun(sessionId: string) {
  const run = runs.get(sessionId);
  if (run) await finish(run);
}

/** Closes every run (shutdown, tests). */
export async function closeAllRuns() {
  await Promise.all([...runs.values()].map((run) => finish(run)));
}

/**
 * For tests: this instance dies under the run (SIGKILL) — the engine connection drops, the lease is neither
 * renewed nor released, nothing more is published or metered. Answers whether there was a run.
 */
export function abandonRun(sessionId: string) {
  const run = runs.get(sessionId);
  if (run) stop(run);
  return run !== undefined;
}
