import { randomUUID } from "node:crypto";
import os from "node:os";

// The runner's timing and identity (ADR 0013). Fixed in production; tests shorten the lease and play a second
// instance in the same process by changing `instance` (a run keeps the identity it claimed with).

export type RunnerSettings = {
  /** This app instance, as it is named in live_sessions.runner_instance. */
  instance: string;
  /** How long a claim or a renewal holds the run; another instance may take over once it lapsed. */
  leaseMs: number;
  /** How often a run renews its lease. */
  heartbeatMs: number;
  /** Audio for a session no run here serves tries a takeover at most this often (per session, per instance). */
  takeoverEveryMs: number;
  /** A run that takes over re-feeds this much audio before the end of what is final, for the engine's context. */
  resumeLeadSamples: number;
};

const DEFAULTS: RunnerSettings = {
  instance: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
  leaseMs: 30_000,
  heartbeatMs: 10_000,
  takeoverEveryMs: 10_000,
  resumeLeadSamples: 8_000, // 0.5 s
};

export const runnerSettings: RunnerSettings = { ...DEFAULTS };

/** For tests: changes some settings (none: back to the defaults). Runs already open keep theirs. */
export function setRunnerSettings(change?: Partial<RunnerSettings>) {
  Object.assign(runnerSettings, change ?? DEFAULTS);
}
