import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { fetch, type Response } from "undici";
import { pinnedFile } from "./catalogue";
import { ModelFetchError, type Pin } from "./fetch-file.server";

// Pins for model files that are not in the catalogue (issue 21, ADR 0027). An operator may name any file on the
// Hugging Face hub, e.g. LOCAL_LLM_MODEL=hf:bartowski/Qwen3-4B-Instruct-2507-GGUF/Qwen3-4B-Instruct-2507-Q8_0.gguf.
// Its SHA-256 and size are then taken from what the hub publishes for the Git LFS object (the X-Linked-Etag and
// X-Linked-Size headers of the file's resolve address, as huggingface_hub reads them) and written to
// `models.lock.json` beside the models. From then on that name is pinned: a later download, copy or load must
// match the lock, whatever the hub says — as with a package lock. A local file that is neither in the catalogue
// nor from the hub is pinned the first time it is verified (the operator put it there) and must not change after.

export const LOCK_FILE = "models.lock.json";
export const HUB_URL = "https://huggingface.co";

export type HubRef = { repo: string; revision: string; file: string };

export type ModelSetting = {
  /** Absolute path of the file the engine loads. */
  file: string;
  /** Its name in the models directory, on a mirror and in the lock. */
  name: string;
  hub?: HubRef;
};

type LockEntry = { sha256: string; size: number; source: string; recorded_at: string };
type Lock = { version: 1; files: Record<string, LockEntry> };

const HUB_SETTING = /^hf:([\w.-]+\/[\w.-]+)(?:@([\w.-]+))?\/(.+)$/;

/**
 * A model setting (LOCAL_*_MODEL): a file name in MODELS_DIR, an absolute path, or `hf:owner/repo[@revision]/path`
 * for a file on the hub (stored under its base name).
 */
export function parseModelSetting(value: string, modelsDir: string): ModelSetting {
  const hub = HUB_SETTING.exec(value);
  if (hub) {
    const [, repo, revision, file] = hub;
    if (file.split("/").some((part) => part === ".." || part === ""))
      throw new Error(`${value}: the path inside the repository is not valid`);
    const name = path.posix.basename(file);
    return { file: path.resolve(modelsDir, name), name, hub: { repo, revision: revision ?? "main", file } };
  }
  const file = path.resolve(modelsDir, value);
  return { file, name: path.basename(file) };
}

export function hubUrl(ref: HubRef, base = HUB_URL) {
  const encoded = ref.file.split("/").map(encodeURIComponent).join("/");
  return `${base.replace(/\/$/, "")}/${ref.repo}/resolve/${encodeURIComponent(ref.revision)}/${encoded}`;
}

function lockKey(modelsDir: string, file: string) {
  // Files in the models directory by name (the directory may move); others by their absolute path.
  return path.dirname(file) === path.resolve(modelsDir) ? path.basename(file) : file;
}

async function readLock(modelsDir: string): Promise<Lock> {
  try {
    const lock = JSON.parse(await readFile(path.join(modelsDir, LOCK_FILE), "utf8")) as Lock;
    if (lock && lock.version === 1 && typeof lock.files === "object") return lock;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`${LOCK_FILE} cannot be read: ${error}`);
  }
  return { version: 1, files: {} };
}

let writing: Promise<unknown> = Promise.resolve();

async function recordPin(modelsDir: string, file: string, entry: LockEntry) {
  // One writer at a time in this process; a temp file and a rename, so the lock is never half written.
  const next = writing.then(async () => {
    const lock = await readLock(modelsDir);
    lock.files[lockKey(modelsDir, file)] = entry;
    await mkdir(modelsDir, { recursive: true });
    const temp = path.join(modelsDir, `${LOCK_FILE}.${process.pid}.tmp`);
    await writeFile(temp, `${JSON.stringify(lock, null, 2)}\n`);
    await rename(temp, path.join(modelsDir, LOCK_FILE));
  });
  writing = next.catch(() => undefined);
  await next;
}

/** The pin a file must match: the catalogue's, else the lock's; undefined when neither knows it. */
export async function knownPin(
  modelsDir: string | undefined,
  file: string,
): Promise<(Pin & { size: number }) | undefined> {
  const pinned = pinnedFile(path.basename(file));
  if (pinned) return { sha256: pinned.sha256, size: pinned.size };
  if (!modelsDir) return undefined;
  const entry = (await readLock(modelsDir)).files[lockKey(modelsDir, file)];
  return entry ? { sha256: entry.sha256, size: entry.size } : undefined;
}

/** Pins a local file on first verification (it was there; from now on it must not change). */
export async function pinFirstSeen(modelsDir: string, file: string, pin: { sha256: string; size: number }) {
  await recordPin(modelsDir, file, { ...pin, source: "local", recorded_at: new Date().toISOString() });
}

/**
 * The pin of a hub file: the lock's if recorded, else what the hub publishes for its LFS object, recorded now.
 * A file the hub serves without an LFS hash (a small text file in Git) cannot be pinned this way.
 */
export async function hubPin(args: {
  modelsDir: string;
  setting: ModelSetting;
  hubBase?: string;
  signal?: AbortSignal;
}) {
  const { modelsDir, setting } = args;
  const locked = await knownPin(modelsDir, setting.file);
  if (locked) return locked;
  if (!setting.hub) return undefined;
  const url = hubUrl(setting.hub, args.hubBase);
  let response: Response;
  try {
    // The hub answers the resolve address with a redirect to its storage; the headers come with the redirect.
    response = await fetch(url, { method: "HEAD", redirect: "manual", signal: args.signal });
  } catch (error) {
    throw new ModelFetchError("network", `cannot reach ${new URL(url).host} to look up ${setting.name}: ${error}`);
  }
  // No such file (a typo in the setting, a removed file): asking again will not help, the operator must act.
  if (response.status === 404)
    throw new ModelFetchError(
      "no_source",
      `the hub has no file ${setting.hub.file} in ${setting.hub.repo}@${setting.hub.revision}: check the setting`,
      404,
    );
  if (response.status >= 400)
    throw new ModelFetchError(
      "http",
      `${new URL(url).host} answered ${response.status} for ${setting.name}`,
      response.status,
    );
  const etag = (response.headers.get("x-linked-etag") ?? "").replace(/^W\//, "").replace(/"/g, "").toLowerCase();
  const size = Number(response.headers.get("x-linked-size"));
  if (!/^[0-9a-f]{64}$/.test(etag) || !Number.isSafeInteger(size) || size <= 0)
    throw new ModelFetchError(
      "no_source",
      `the hub publishes no LFS SHA-256 for ${setting.hub.repo}/${setting.hub.file}, so it cannot be verified`,
    );
  const pin = { sha256: etag, size };
  await recordPin(modelsDir, setting.file, {
    ...pin,
    source: `hf:${setting.hub.repo}@${setting.hub.revision}/${setting.hub.file}`,
    recorded_at: new Date().toISOString(),
  });
  return pin;
}
