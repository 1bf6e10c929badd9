// The lane of one loaded native model (whisper.cpp or Parakeet): one call at a time (bounded memory: one model,
// one window), loading and unloading go through the same lane, `urgent` work (a live run, someone waiting for
// it) goes before work still queued, the model is released after `idleUnloadMs` without a call, and not while
// someone holds it (an open live run: no reload mid-session).

export type ModelLane<M> = {
  /** Runs `task` alone in the lane with the model, loaded first if it is not; restarts the idle timer after. */
  run<T>(task: (model: M) => Promise<T>, urgent?: boolean): Promise<T>;
  /** Keeps the model loaded until the returned release is called. */
  hold(): () => void;
  /** Frees the model now (tests, shutdown); the next call loads it again. */
  unload(): Promise<void>;
};

export type ModelLaneOptions<M> = {
  /** Loads the model; runs inside the lane. */
  load(): Promise<M>;
  /** Frees a model that is let go (default: nothing, the garbage collector does). */
  free?(model: M): Promise<void>;
  /** Whether a model loaded before can still be used (default: always). */
  usable?(model: M): boolean;
  idleUnloadMs: number;
};

type LaneJob = { task: () => Promise<unknown>; urgent: boolean; done: (run: Promise<unknown>) => void };

export function createModelLane<M>(options: ModelLaneOptions<M>): ModelLane<M> {
  let model: M | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let holds = 0;
  const queue: LaneJob[] = [];
  let busy = false;

  async function drain() {
    if (busy) return;
    busy = true;
    for (let job = queue.shift(); job; job = queue.shift()) {
      const run = job.task();
      job.done(run);
      await run.catch(() => undefined);
    }
    busy = false;
  }

  function exclusive<T>(task: () => Promise<T>, urgent = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job: LaneJob = { task, urgent, done: (run) => (run as Promise<T>).then(resolve, reject) };
      const at = urgent ? queue.findIndex((queued) => !queued.urgent) : -1;
      if (at >= 0) queue.splice(at, 0, job);
      else queue.push(job);
      void drain();
    });
  }

  async function freeModel() {
    const current = model;
    model = undefined;
    if (current !== undefined && options.free) await options.free(current);
  }

  function scheduleUnload() {
    clearTimeout(idleTimer);
    if (holds > 0) return;
    idleTimer = setTimeout(() => void exclusive(freeModel).catch(() => undefined), options.idleUnloadMs);
    idleTimer.unref();
  }

  /** Inside the lane only. */
  async function loaded(): Promise<M> {
    if (model !== undefined && (options.usable?.(model) ?? true)) return model;
    model = await options.load();
    return model;
  }

  return {
    run(task, urgent = false) {
      return exclusive(async () => {
        clearTimeout(idleTimer);
        try {
          return await task(await loaded());
        } finally {
          scheduleUnload();
        }
      }, urgent);
    },

    hold() {
      holds += 1;
      clearTimeout(idleTimer);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds -= 1;
        if (holds === 0 && model !== undefined) scheduleUnload();
      };
    },

    unload() {
      clearTimeout(idleTimer);
      return exclusive(freeModel);
    },
  };
}
