import { createHash, type Hash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { chmod, copyFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
// undici's own fetch, not the global: inside the app Remix may install a fetch whose bodies are not Node's web
// streams (Readable.fromWeb refuses them), and undici's is the one the other adapters use.
import { fetch, type Response } from "undici";

// One model file onto disk, verified (issue 21): written to "<name>.part", checked against its pinned SHA-256 and
// size, and only then renamed into place, so a half-downloaded or altered file never carries a model's name. A
// download that broke off is resumed where it stopped (HTTP Range); a server that ignores Range starts it again.
// Used by the background downloader (downloads.server.ts) and by `npm run models` (cli.server.ts).

export type Pin = { sha256: string; size?: number };

export type FetchFailure = "network" | "http" | "checksum" | "size" | "no_source";

export class ModelFetchError extends Error {
  constructor(
    readonly kind: FetchFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "ModelFetchError";
  }
}

export type FetchProgress = (done: number, total: number | undefined) => void;

const IDLE_TIMEOUT_MS = 60_000;

export function partPath(target: string) {
  return `${target}.part`;
}

export async function fileSize(file: string): Promise<number | undefined> {
  try {
    const info = await stat(file);
    return info.isFile() ? info.size : undefined;
  } catch {
    return undefined;
  }
}

export async function sha256Of(file: string, hash: Hash = createHash("sha256")): Promise<string> {
  await pipeline(createReadStream(file), hash);
  return hash.digest("hex");
}

/** The bytes already on disk, hashed again, so a resumed download is verified over the whole file. */
async function hashOfPart(part: string, bytes: number): Promise<Hash> {
  const hash = createHash("sha256");
  if (bytes === 0) return hash;
  for await (const chunk of createReadStream(part, { start: 0, end: bytes - 1 })) hash.update(chunk as Buffer);
  return hash;
}

function describe(error: unknown) {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? (error as { code?: string })?.code;
  const detail = cause?.message ?? (error as Error)?.message ?? String(error);
  return code && !detail.includes(code) ? `${code}: ${detail}` : detail;
}

function mebibytes(bytes: number) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Size and checksum of a finished part; renames it into place when both match, removes it when not. */
async function settlePart(part: string, target: string, got: { sha256: string; bytes: number }, pin: Pin) {
  const name = path.basename(target);
  if (pin.size !== undefined && got.bytes !== pin.size) {
    await rm(part, { force: true });
    throw new ModelFetchError(
      "size",
      `${name}: got ${got.bytes} bytes, expected ${pin.size}: the file is incomplete or a different one`,
    );
  }
  if (got.sha256 !== pin.sha256) {
    await rm(part, { force: true });
    throw new ModelFetchError(
      "checksum",
      `${name}: checksum mismatch (got ${got.sha256}, expected ${pin.sha256}); the file was discarded`,
    );
  }
  await chmod(part, 0o644);
  await rename(part, target);
}

/**
 * Downloads `url` into `target`, resuming a `.part` left by an earlier attempt. Throws ModelFetchError; the part
 * stays for the next attempt unless its bytes are known to be wrong (then it is removed).
 */
export async function downloadVerified(args: {
  url: string;
  target: string;
  pin: Pin;
  onProgress?: FetchProgress;
  signal?: AbortSignal;
  idleTimeoutMs?: number;
}): Promise<{ bytes: number; resumedFrom: number }> {
  const { url, target, pin } = args;
  const part = partPath(target);
  const host = new URL(url).host;
  let have = (await fileSize(part)) ?? 0;
  if (pin.size !== undefined && have > pin.size) {
    await rm(part, { force: true });
    have = 0;
  }
  const idleMs = args.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  const controller = new AbortController();
  const abortFromCaller = () => controller.abort(args.signal?.reason);
  args.signal?.addEventListener("abort", abortFromCaller, { once: true });
  let idle = setTimeout(() => controller.abort(new Error(`no data for ${idleMs / 1000} s`)), idleMs);
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new Error(`no data for ${idleMs / 1000} s`)), idleMs);
  };
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: have > 0 ? { Range: `bytes=${have}-` } : {},
        redirect: "follow",
        signal: controller.signal,
      });
    } catch (error) {
      throw new ModelFetchError("network", `cannot reach ${host} (${describe(error)})`);
    }
    // Everything was there already (a drop after the last byte): only the check is left.
    if (response.status === 416 && have > 0 && pin.size === have) {
      await response.body?.cancel();
      const hash = await hashOfPart(part, have);
      await settlePart(part, target, { sha256: hash.digest("hex"), bytes: have }, pin);
      return { bytes: have, resumedFrom: have };
    }
    if (response.status !== 200 && response.status !== 206) {
      await response.body?.cancel();
      if (response.status === 416) await rm(part, { force: true });
      throw new ModelFetchError(
        "http",
        `${host} answered ${response.status} ${response.statusText} for ${path.basename(target)}`,
        response.status,
      );
    }
    if (!response.body) throw new ModelFetchError("http", `${host} sent no body for ${path.basename(target)}`);
    let start = 0;
    if (response.status === 206) {
      const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get("content-range") ?? "");
      if (!range || Number(range[1]) !== have) {
        await response.body.cancel();
        await rm(part, { force: true });
        throw new ModelFetchError("http", `${host} answered a range that does not continue the partial file`);
      }
      start = have;
    }
    const hash = start > 0 ? await hashOfPart(part, start) : createHash("sha256");
    const length = Number(response.headers.get("content-length"));
    const total = pin.size ?? (Number.isFinite(length) && length > 0 ? start + length : undefined);
    let bytes = start;
    args.onProgress?.(bytes, total);
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        touch();
        bytes += chunk.length;
        if (pin.size !== undefined && bytes > pin.size) {
          callback(new ModelFetchError("size", `${path.basename(target)}: more than the pinned ${pin.size} bytes`));
          return;
        }
        hash.update(chunk);
        args.onProgress?.(bytes, total);
        callback(null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(response.body), meter, createWriteStream(part, { flags: start > 0 ? "a" : "w" }));
    } catch (error) {
      if (error instanceof ModelFetchError) {
        await rm(part, { force: true });
        throw error;
      }
      throw new ModelFetchError(
        "network",
        `the download from ${host} broke off after ${mebibytes(bytes)} (${describe(error)}); it resumes from there`,
      );
    }
    await settlePart(part, target, { sha256: hash.digest("hex"), bytes }, pin);
    return { bytes, resumedFrom: start };
  } finally {
    clearTimeout(idle);
    args.signal?.removeEventListener("abort", abortFromCaller);
  }
}

/**
 * `npm run models -- --from DIR`: the same file from a share or a stick, verified exactly like a download. Without
 * a pin (a file nobody published one for) it is copied as it is and its SHA-256 returned, for the lock.
 */
export async function copyVerified(args: { source: string; target: string; pin?: Pin }) {
  const part = partPath(args.target);
  if ((await fileSize(args.source)) === undefined)
    throw new ModelFetchError("no_source", `${args.source} does not exist`);
  await rm(part, { force: true });
  await copyFile(args.source, part);
  const bytes = (await fileSize(part)) ?? 0;
  const sha256 = await sha256Of(part);
  await settlePart(part, args.target, { sha256, bytes }, args.pin ?? { sha256 });
  return { bytes, sha256 };
}
