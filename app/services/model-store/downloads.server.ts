import { mkdir, open, rename, rm, stat, utimes } from "node:fs/promises";
import path from "node:path";
import type { NeededModel } from "../config/engines.server";
import { pinnedFile, type ModelRole } from "./catalogue";
import { downloadVerified, fileSize, ModelFetchError, partPath, type Pin } from "./fetch-file.server";
import { hubPin, hubUrl, knownPin } from "./hub-pin.server";
import { progressLine, rateMeter } from "./progress-line";
import { markVerified, verificationProblem } from "./verify.server";

// The models of the configured local engines, fetched in the background on first start (issue 21, ADR 0027): the
// app answers at once; each missing file is downloaded in turn (smallest first, the letter model last), resumed after
// a dropped connection, retried with backoff, verified before it takes its name. What happens is visible in the
// terminal (a line per file with size, speed and time left), on the workspace (a banner for signed-in users, and
// recordings waiting for the model), and on the admin health page — all three read `modelStatus()`.
//
// Several processes may share one models directory (web instances and a worker): a lock file beside the part
// decides who downloads; the others show the part's growth and pick the file up when it is there.

export type DownloadState =
  /** Present and verified. */
  | "ready"
  | "queued"
  | "downloading"
  /** Another process sharing the directory downloads it. */
  | "elsewhere"
  /** The last attempt failed; the next one is scheduled. */
  | "retrying"
  /** Cannot be fetched by the app (no address or no pin): the operator must act. */
  | "failed"
  /** Missing, and MODELS_AUTO_DOWNLOAD=0 leaves it to the operator. */
  | "missing";

export type ModelFileStatus = {
  name: string;
  role: ModelRole;
  label: string;
  size?: number;
  state: DownloadState;
  bytes: number;
  bytesPerSecond: number;
  secondsLeft?: number;
  error?: string;
  nextAttemptAt?: Date;
};

export type ModelsSettings = {
  dir: string;
  mirrorUrl?: string;
  hubUrl: string;
  autoDownload: boolean;
  /** The longest wait between two attempts (MODELS_RETRY_MAX_SECONDS); `options.maxRetryMs` overrides it. */
  retryMaxMs?: number;
  needed: NeededModel[];
};

type Options = {
  /** First retry after this long, doubling up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  log?: (line: string) => void;
  /** How often a terminal line is printed while a file downloads. */
  logEveryMs?: number;
};

const ORDER: ModelRole[] = ["vad", "segmentation", "embedding", "speech", "letter"];
const LOCK_STALE_MS = 60_000;
const COMING: DownloadState[] = ["queued", "downloading", "elsewhere", "retrying"];

type Manager = {
  settings: ModelsSettings;
  files: ModelFileStatus[];
  stop: AbortController;
  done: Promise<void>;
};

let manager: Manager | undefined;
const listeners = new Set<() => void>();

/** Called whenever a file becomes ready (the queues wake the jobs that waited for it). */
export function onModelReady(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function sleep(ms: number, signal: AbortSignal) {
  return new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    signal.addEventListener("abort", wake, { once: true });
  });
}

function labelOf(name: string, role: ModelRole) {
  return pinnedFile(name)?.label ?? `${name} (${role})`;
}

async function exists(file: string) {
  return (await fileSize(file)) !== undefined;
}

/** Takes the directory's lock for one file; false while a live process holds it. */
async function acquireLock(lock: string) {
  try {
    const handle = await open(lock, "wx");
    await handle.writeFile(String(process.pid));
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const info = await stat(lock).catch(() => undefined);
  if (info && Date.now() - info.mtimeMs < LOCK_STALE_MS) return false;
  // Left by a process that died: take it over.
  await rm(lock, { force: true });
  return acquireLock(lock);
}

async function fetchOne(m: Manager, status: ModelFileStatus, model: NeededModel, options: Required<Options>) {
  const { settings, stop } = m;
  const target = model.setting.file;
  const lock = `${target}.lock`;
  let retryMs = options.retryMs;
  while (!stop.signal.aborted) {
    if (await exists(target)) {
      const problem = await verificationProblem(target, settings.dir);
      if (!problem) {
        status.state = "ready";
        status.bytes = status.size ?? status.bytes;
        status.error = undefined;
        for (const listener of listeners) listener();
        return;
      }
      // Never loaded, never deleted: set aside for the operator to look at, and fetched again.
      await rename(target, `${target}.rejected`).catch(() => undefined);
      options.log(`[models] ${status.name}: ${problem}; set aside as ${path.basename(target)}.rejected`);
    }
    if (!settings.autoDownload) {
      status.state = "missing";
      status.error = "MODELS_AUTO_DOWNLOAD=0: run `npm run models` (or copy the files with `--from DIR`)";
      return;
    }
    let pin: Pin | undefined;
    let lookupFailed = false;
    try {
      pin =
        (await knownPin(settings.dir, target)) ??
        (await hubPin({
          modelsDir: settings.dir,
          setting: model.setting,
          hubBase: settings.hubUrl,
          signal: stop.signal,
        }));
    } catch (error) {
      status.error = (error as Error).message;
      // A file the hub publishes no LFS hash for can never be verified: the operator must act.
      if (error instanceof ModelFetchError && error.kind === "no_source") {
        status.state = "failed";
        options.log(`[models] ${status.error}`);
        return;
      }
      // The hub could not be asked for the pin: worth another try, like a failed download.
      lookupFailed = true;
    }
    const pinned = pinnedFile(model.setting.name);
    const url = settings.mirrorUrl
      ? `${settings.mirrorUrl}/${encodeURIComponent(model.setting.name)}`
      : model.setting.hub
        ? hubUrl(model.setting.hub, settings.hubUrl)
        : pinned?.url;
    if (!lookupFailed && (!pin || !url)) {
      status.state = "failed";
      status.error = !pin
        ? `${status.name} has no pinned checksum: name a catalogue model, an hf: model, or copy it with \`npm run models -- --from DIR\``
        : `${status.name} has no download address: set MODELS_URL to a mirror, or copy it with \`npm run models -- --from DIR\``;
      options.log(`[models] ${status.error}`);
      return;
    }
    status.size = pin?.size ?? status.size;
    if (pin && url && (await acquireLock(lock))) {
      const keepAlive = setInterval(() => void utimes(lock, new Date(), new Date()).catch(() => undefined), 10_000);
      status.state = "downloading";
      const rate = rateMeter();
      let lastLine = 0;
      try {
        await downloadVerified({
          url,
          target,
          pin,
          signal: stop.signal,
          onProgress(done, total) {
            status.bytes = done;
            status.size = total ?? status.size;
            status.bytesPerSecond = rate(done);
            status.secondsLeft =
              status.size && status.bytesPerSecond > 0 ? (status.size - done) / status.bytesPerSecond : undefined;
            const now = Date.now();
            if (done > 0 && (now - lastLine >= options.logEveryMs || (total !== undefined && done === total))) {
              lastLine = now;
              options.log(
                `[models] ${progressLine({ name: status.name, done, total, bytesPerSecond: status.bytesPerSecond })}`,
              );
            }
          },
        });
        status.error = undefined;
        retryMs = options.retryMs;
        // Its size and SHA-256 were checked as it was written: the next turn finds it ready without hashing again.
        await markVerified(target);
        continue;
      } catch (error) {
        if (stop.signal.aborted) return;
        status.error = error instanceof ModelFetchError ? error.message : String(error);
      } finally {
        clearInterval(keepAlive);
        await rm(lock, { force: true });
      }
    } else if (pin && url) {
      status.state = "elsewhere";
      status.bytes = (await fileSize(partPath(target))) ?? 0;
      await sleep(1000, stop.signal);
      continue;
    }
    status.state = "retrying";
    status.nextAttemptAt = new Date(Date.now() + retryMs);
    options.log(`[models] ${status.name}: ${status.error}; next attempt in ${Math.round(retryMs / 1000)} s`);
    await sleep(retryMs, stop.signal);
    retryMs = Math.min(retryMs * 2, options.maxRetryMs);
    status.nextAttemptAt = undefined;
  }
}

/**
 * Starts fetching what the configured engines need and is missing (once per process; a second call with other
 * settings replaces the first). The promise it returns settles when every file is ready or given up on; the app
 * does not wait for it.
 */
export function startModelDownloads(settings: ModelsSettings, options: Options = {}) {
  if (manager) void stopModelDownloads();
  const full: Required<Options> = {
    retryMs: options.retryMs ?? 2_000,
    maxRetryMs: options.maxRetryMs ?? settings.retryMaxMs ?? 5 * 60_000,
    log: options.log ?? ((line) => console.log(line)),
    logEveryMs: options.logEveryMs ?? 5_000,
  };
  const needed = [...settings.needed].sort((a, b) => ORDER.indexOf(a.role) - ORDER.indexOf(b.role));
  const files: ModelFileStatus[] = needed.map((model) => ({
    name: model.setting.name,
    role: model.role,
    label: labelOf(model.setting.name, model.role),
    size: pinnedFile(model.setting.name)?.size,
    state: "queued",
    bytes: 0,
    bytesPerSecond: 0,
  }));
  const m: Manager = { settings, files, stop: new AbortController(), done: Promise.resolve() };
  manager = m;
  m.done = (async () => {
    await mkdir(settings.dir, { recursive: true });
    for (const [index, model] of needed.entries()) {
      if (m.stop.signal.aborted) return;
      await fetchOne(m, files[index], model, full);
    }
  })().catch((error) => {
    full.log(`[models] the model download stopped: ${(error as Error).message}`);
  });
  return m.done;
}

export async function stopModelDownloads() {
  const m = manager;
  manager = undefined;
  if (!m) return;
  m.stop.abort();
  await m.done;
}

export type ModelsOverview = {
  files: ModelFileStatus[];
  /** Share of the bytes still to come that have arrived, over the files not yet ready; null when none is coming. */
  percent: number | null;
  /** The latest reason a file could not be fetched, while it is retrying or failed. */
  problem?: { name: string; error: string; nextAttemptAt?: Date };
};

function overviewOf(files: ModelFileStatus[]): ModelsOverview {
  const coming = files.filter((f) => COMING.includes(f.state));
  const total = coming.reduce((sum, f) => sum + (f.size ?? 0), 0);
  const done = coming.reduce((sum, f) => sum + Math.min(f.bytes, f.size ?? 0), 0);
  // A file keeps its last error through the next attempt, until it is ready: the reason stays visible.
  const troubled = files.find((f) => f.state !== "ready" && f.error);
  return {
    files: files.map((f) => ({ ...f })),
    percent: coming.length === 0 ? null : total > 0 ? Math.floor((done / total) * 100) : 0,
    problem: troubled
      ? { name: troubled.name, error: troubled.error!, nextAttemptAt: troubled.nextAttemptAt }
      : undefined,
  };
}

/** What the terminal, the workspace banner and the admin tile show; empty when nothing was started here. */
export function modelStatus(roles?: ModelRole[]): ModelsOverview {
  const files = (manager?.files ?? []).filter((f) => !roles || roles.includes(f.role));
  return overviewOf(files);
}

export const SPEECH_ROLES: ModelRole[] = ["vad", "segmentation", "embedding", "speech"];
export const LETTER_ROLES: ModelRole[] = ["letter"];

/**
 * While a model of these roles is still coming (queued, downloading, retrying), jobs that need it wait instead of
 * failing: the percentage to show. Undefined when they need not wait (ready, or nothing will fetch it).
 */
export function waitingForModels(roles: ModelRole[]): { percent: number } | undefined {
  const files = (manager?.files ?? []).filter((f) => roles.includes(f.role));
  if (!files.some((f) => COMING.includes(f.state))) return undefined;
  return { percent: overviewOf(files).percent ?? 0 };
}
