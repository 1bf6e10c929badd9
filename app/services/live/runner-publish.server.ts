import { LIVE_SAMPLE_RATE } from "~/live/protocol";
import type { LiveSessionRow } from "~/models/live-session.server";
import { wake } from "./bus.server";
import { getLiveEngine } from "./engine.server";
import type { LiveEngineMessage, LiveEngineRun } from "./engine-types";
import { meterLiveAudio } from "./live-usage.server";
import { advanceMetered, insertRunMessage } from "./runner-store.server";
import { finalEnd, keepAfter, shift } from "./runner-timeline";

// What a run of a live session (runner.server.ts) leaves behind: the messages it publishes, on the session's
// time line and without what was final before it began, each final moving the session's recognised point; and
// the audio it fed, metered once per second of the session however many runs heard it.

export type Run = {
  session: LiveSessionRow;
  /** The instance identity the run claimed with (tests change the settings under it). */
  instance: string;
  engine?: LiveEngineRun;
  /** Where the run's audio begins on the session's time line, and how much it gave its engine (samples). */
  startSamples: number;
  fedSamples: number;
  offsetSeconds: number;
  /** The end of what was final when the run began (seconds), until the engine says something new. */
  finalUntil: number | null;
  nextSeq: number;
  endSeq: number | null;
  endSent: boolean;
  /** EndOfTranscript came after EndOfStream: every buffer fed is recognised. */
  complete: boolean;
  feeding: boolean;
  again: boolean;
  finished: boolean;
  publishing: Promise<unknown>;
  timers: { heartbeat?: NodeJS.Timeout; idle?: NodeJS.Timeout; end?: NodeJS.Timeout };
  stops: Array<() => void>;
};

const kindOf: Record<LiveEngineMessage["message"], string> = {
  AddTranscript: "final",
  AddPartialTranscript: "partial",
  Warning: "notice",
  Info: "notice",
  Error: "error",
  EndOfTranscript: "end",
};

/**
 * Publishes in the order the engine spoke: one insert after the other, each followed by a wake-up. Only while
 * the run holds the session: when another instance took over, `lost` is called and nothing is stored.
 */
export function publish(run: Run, message: LiveEngineMessage, lost: () => void) {
  const id = run.session.id;
  let out: object = message;
  let reached: number | undefined;
  if (message.message === "AddTranscript" || message.message === "AddPartialTranscript") {
    const kept = keepAfter(shift(message, run.offsetSeconds), run.finalUntil);
    if (!kept.message) return run.publishing; // all of it was final already
    out = kept.message;
    if (message.message === "AddTranscript") {
      run.finalUntil = kept.finalUntil;
      const end = finalEnd(kept.message);
      if (end !== null) reached = Math.round(end * LIVE_SAMPLE_RATE);
    }
  }
  run.publishing = run.publishing
    .then(() => insertRunMessage(id, run.instance, kindOf[message.message], out, reached))
    .then((n) => (n === undefined ? lost() : wake("messages", id)))
    .catch((error: unknown) => console.warn("[live] cannot publish:", error instanceof Error ? error.message : error));
  return run.publishing;
}

/** What the run fed its engine is metered, less what a run of the session already metered. */
export async function meterRun(run: Run) {
  if (run.fedSamples === 0) return;
  const samples = await advanceMetered(run.session.id, run.startSamples + run.fedSamples);
  const engine = getLiveEngine().name;
  meterLiveAudio({ userId: run.session.owner_id, seconds: samples / LIVE_SAMPLE_RATE, engine });
}
