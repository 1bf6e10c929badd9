import { findLiveSessionById, type LiveSessionRow } from "~/models/live-session.server";
import { ensureRun, runsHere } from "./runner.server";
import { runnerSettings } from "./runner-settings.server";

// Takeover (ADR 0013): the instance holding a session's run may die (a crash, a kill) without letting go. Its
// lease then lapses, and another instance continues the run — claimed atomically in SQL, so only one wins:
// - when audio for the session arrives at an instance that does not run it, at most once every
//   `takeoverEveryMs` per session (while the runner lives, that is one UPDATE that changes nothing);
// - when the stream ends there (EndOfStream, or a save of a session nobody stopped), by a timer at the end of
//   the holder's lease, since no more audio will come to trigger it.
// The new run re-feeds the engine from the end of what is final; the session's clients see its messages
// through the table and the bus as they saw the old run's.

const lastTry = new Map<string, number>();
/** Sessions whose lease this instance watches: the timer of the next look, or null while it looks. */
const watched = new Map<string, NodeJS.Timeout | null>();

function warn(error: unknown) {
  console.warn("[live] cannot take over a run:", error instanceof Error ? error.message : error);
}

/**
 * Audio arrived for the session: take its run over if nobody here runs it and its lease lapsed. Answers null
 * when it did not try (a run here, or tried lately), else whether this instance now runs the session.
 */
export function takeOverIfLapsed(session: LiveSessionRow, now = Date.now()): Promise<boolean> | null {
  if (runsHere(session.id)) return null;
  const every = runnerSettings.takeoverEveryMs;
  if (now - (lastTry.get(session.id) ?? -Infinity) < every) return null;
  lastTry.set(session.id, now);
  if (lastTry.size > 1_000) for (const [id, at] of lastTry) if (now - at >= every) lastTry.delete(id);
  return ensureRun(session, "takeover").catch((error: unknown) => {
    warn(error);
    return false;
  });
}

/**
 * The session's stream ended here while another instance holds its run: if that instance is gone, take the run
 * over once its lease lapsed, so what is left is recognised and the run ends. Stops as soon as the session is
 * no longer running or ending, or a run here serves it.
 */
export function takeOverWhenLapsed(session: LiveSessionRow) {
  if (watched.has(session.id)) return;
  const check = async () => {
    watched.set(session.id, null);
    try {
      const current = await findLiveSessionById(session.id);
      const open = current && (current.status === "running" || current.status === "ending");
      if (!open || runsHere(session.id)) return void watched.delete(session.id);
      const until = current.runner_lease_until?.getTime() ?? 0;
      if (until <= Date.now() && (await ensureRun(current, "takeover"))) return void watched.delete(session.id);
      // Held (renewed, or just claimed elsewhere): look again when that lease would lapse.
      const timer = setTimeout(() => void check(), Math.max(until - Date.now(), 0) + 50);
      timer.unref();
      watched.set(session.id, timer);
    } catch (error) {
      watched.delete(session.id);
      warn(error);
    }
  };
  void check();
}

/** Stops every timer (shutdown, tests). */
export function stopTakeovers() {
  for (const timer of watched.values()) if (timer) clearTimeout(timer);
  watched.clear();
  lastTry.clear();
}
