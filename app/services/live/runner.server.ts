import { randomUUID } from "node:crypto";
import os from "node:os";
import { LIVE_SAMPLE_RATE, LIVE_SETTINGS, type LiveResult, type TranscriptMessage } from "~/live/protocol";
import {
  claimLiveRunner,
  deleteLivePartials,
  findLiveSessionById,
  insertLiveMessage,
  readLiveAudio,
  releaseLiveRunner,
  renewLiveRunner,
  type LiveSessionRow,
} from "~/models/live-session.server";
import { getVocabulary } from "../speech/vocabulary.server";
import { subscribe, wake, type AudioWake } from "./bus.server";
import { getLiveEngine } from "./engine.server";
import { LiveEngineError, type LiveEngineMessage, type LiveEngineRun } from "./engine-types";
import { meterLiveAudio, pcmSeconds } from "./live-usage.server";

// The runner of a live session (ADR 0013): the one instance that holds the engine connection for a run. It
// takes the session with a lease it renews, feeds the engine every stored buffer in order — handed over in
// memory when this instance stored it, read from live_audio when another instance did — and publishes what the
// engine says, shifted onto the session's time line. A run ends on EndOfTranscript, on an engine error, when
// the lease is lost, or after IDLE_END_MS without audio (the client went away without EndOfStream; what it
// sent is recognised and kept, and the session can be continued or saved).

export const RUNNER_INSTANCE = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
const LEASE_MS = 30_000;
const HEARTBEAT_MS = 10_000;
const IDLE_END_MS = 60_000;
/** After EndOfStream the engine must finish within max_delay plus this, or the run is closed for it. */
const END_GRACE_MS = 10_000;

type Run = {
  session: LiveSessionRow;
  engine?: LiveEngineRun;
  /** Bytes of PCM this run gave its engine: what the run costs, metered when it ends. */
  fedBytes: number;
  offsetSeconds: number;
  nextSeq: number;
  endSeq: number | null;
  endSent: boolean;
  feeding: boolean;
  again: boolean;
  finished: boolean;
  publishing: Promise<unknown>;
  timers: { heartbeat?: NodeJS.Timeout; idle?: NodeJS.Timeout; end?: NodeJS.Timeout };
  stops: Array<() => void>;
};

const runs = new Map<string, Run>();

function shift(message: TranscriptMessage, offset: number): TranscriptMessage {
  const at = (t: number) => Math.round((t + offset) * 1000) / 1000;
  return {
    ...message,
    metadata: {
      ...message.metadata,
      start_time: at(message.metadata.start_time),
      end_time: at(message.metadata.end_time),
    },
    results: message.results.map((r: LiveResult) => ({ ...r, start_time: at(r.start_time), end_time: at(r.end_time) })),
  };
}

const kindOf: Record<LiveEngineMessage["message"], string> = {
  AddTranscript: "final",
  AddPartialTranscript: "partial",
  Warning: "notice",
  Info: "notice",
  Error: "error",
  EndOfTranscript: "end",
};

/** Publishes in the order the engine spoke: one insert after the other, each followed by a wake-up. */
function publish(run: Run, message: LiveEngineMessage) {
  const id = run.session.id;
  const shifted =
    message.message === "AddTranscript" || message.message === "AddPartialTranscript"
      ? shift(message, run.offsetSeconds)
      : message;
  run.publishing = run.publishing
    .then(() => insertLiveMessage(id, kindOf[message.message], shifted))
    .then(() => wake("messages", id))
    .catch((error: unknown) => console.warn("[live] cannot publish:", error instanceof Error ? error.message : error));
  return run.publishing;
}

async function finish(run: Run, outcome: { errorType?: string; errorReason?: string } = {}) {
  if (run.finished) return;
  run.finished = true;
  runs.delete(run.session.id);
  for (const timer of Object.values(run.timers)) clearTimeout(timer);
  for (const stop of run.stops) stop();
  run.engine?.close();
  if (run.engine) {
    meterLiveAudio({ userId: run.session.owner_id, seconds: pcmSeconds(run.fedBytes), engine: getLiveEngine().name });
  }
  await run.publishing;
  await releaseLiveRunner(run.session.id, RUNNER_INSTANCE, outcome);
  await deleteLivePartials(run.session.id);
  await wake("messages", run.session.id);
}

function onEngineMessage(run: Run, message: LiveEngineMessage) {
  if (run.finished) return;
  void publish(run, message);
  if (message.message === "Error") void finish(run, { errorType: message.type, errorReason: message.reason });
  else if (message.message === "EndOfTranscript") void finish(run);
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
      void publish(run, { message: "EndOfTranscript" });
      void finish(run);
    },
    maxDelay * 1000 + END_GRACE_MS,
  );
  run.timers.end.unref();
}

function give(run: Run, pcm: Buffer) {
  if (!run.engine) return;
  run.engine.addAudio(pcm);
  run.fedBytes += pcm.length;
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

/**
 * Makes sure a run serves the session: this instance starts one unless a run is already open (here, or on
 * another instance whose lease holds). Rejects with LiveEngineError when the engine cannot start.
 */
export async function ensureRun(session: LiveSessionRow): Promise<void> {
  if (runs.has(session.id)) return;
  const claim = await claimLiveRunner(session.id, RUNNER_INSTANCE, LEASE_MS);
  if (!claim) return; // another instance runs it; audio reaches it through the table and NOTIFY
  const run: Run = {
    session,
    fedBytes: 0,
    offsetSeconds: Number(claim.run_started_samples) / LIVE_SAMPLE_RATE,
    nextSeq: claim.buffers + 1,
    endSeq: null,
    endSent: false,
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
      vocabulary: getVocabulary(session.language),
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
    await finish(run, { errorType: failure.type, errorReason: failure.message });
    throw failure;
  }
  if (run.finished) return;
  const audio = subscribe("audio", session.id, (wakeUp) => onAudio(run, wakeUp));
  const control = subscribe("control", session.id, () => void onControl(run));
  run.stops.push(audio.stop, control.stop);
  run.timers.heartbeat = setInterval(() => {
    void renewLiveRunner(session.id, RUNNER_INSTANCE, LEASE_MS).then((held) => {
      if (!held) void finish(run, { errorType: "session_timeout", errorReason: "The run lost its lease" });
    });
  }, HEARTBEAT_MS);
  run.timers.heartbeat.unref();
  armIdle(run);
  await Promise.all([audio.ready, control.ready]);
  // Audio stored between the claim and the subscription.
  void feed(run);
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
