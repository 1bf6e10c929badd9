import { createReadStream } from "node:fs";
import { createHash, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, readFile, rename, rm, stat, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";

import { z } from "zod";

import { chunksOf } from "./storage-http.server";
import {
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_DOWNLOAD_URL_SECONDS,
  DEFAULT_UPLOAD_URL_SECONDS,
  assertContentType,
  assertWellFormedKey,
  resolveExpiry,
} from "./storage-keys.server";
import { createLocalSignedUrl, verifyLocalSignature, type LocalSignatureResult } from "./storage-local-signing.server";
import type { ObjectStorage, StorageConfig, StorageHealth } from "./storage-types.server";

export type LocalStorageConfig = Extract<StorageConfig, { kind: "local" }>;

/** Everything `put` accepts, plus the web stream a Remix action hands over as `request.body`. */
export type LocalUploadBody = Buffer | Uint8Array | NodeJS.ReadableStream | ReadableStream<Uint8Array>;

export type LocalWriteResult = { ok: true; size: number; etag: string } | { ok: false; reason: "too_large" };

export interface LocalObjectStorage extends ObjectStorage {
  readonly kind: "local";
  readonly maxUploadBytes: number;
  /** Checks a signed URL's query against the HTTP method and key it was used with. */
  verifyRequest(args: { method: "GET" | "PUT"; key: string; searchParams: URLSearchParams }): LocalSignatureResult;
  /** Streams `body` to a temp file and renames it into place; stops once more than `maxBytes` arrived. */
  write(args: {
    key: string;
    contentType: string;
    body: LocalUploadBody;
    maxBytes?: number;
  }): Promise<LocalWriteResult>;
}

const MIN_SECRET_LENGTH = 16;
// Internal folders start with a dot, which no valid key can (keys start with an area name), so objects,
// their metadata and half-written uploads can never collide.
const META_DIR = ".meta";
const TMP_DIR = ".tmp";

const metaSchema = z.object({ contentType: z.string(), etag: z.string().optional() });
type ObjectMeta = z.infer<typeof metaSchema>;

export function isLocalStorage(storage: ObjectStorage): storage is LocalObjectStorage {
  return storage.kind === "local" && "verifyRequest" in storage && "write" in storage;
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR";
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function validateConfig(config: LocalStorageConfig): { root: string; baseUrl: string } {
  if (!config.directory) throw new Error("Local storage: directory is required");
  if (typeof config.signingSecret !== "string" || config.signingSecret.length < MIN_SECRET_LENGTH) {
    throw new Error(`Local storage: signingSecret must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  if (!Number.isSafeInteger(config.maxUploadBytes) || config.maxUploadBytes <= 0) {
    throw new Error("Local storage: maxUploadBytes must be a positive integer");
  }
  let parsed: URL;
  try {
    parsed = new URL(config.publicBaseUrl);
  } catch {
    throw new Error("Local storage: publicBaseUrl must be an absolute URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error("Local storage: publicBaseUrl must use http or https");
  }
  return { root: path.resolve(config.directory), baseUrl: config.publicBaseUrl.replace(/\/+$/, "") };
}

export function createLocalStorage(config: LocalStorageConfig): LocalObjectStorage {
  const { root, baseUrl } = validateConfig(config);
  const { signingSecret, maxUploadBytes } = config;

  // The key rules already forbid escaping the root; this second check guards against a future change there.
  function inside(...parts: string[]): string {
    const resolved = path.resolve(root, ...parts);
    if (!resolved.startsWith(root + path.sep)) throw new Error("Local storage: path escapes the storage directory");
    return resolved;
  }

  function objectPath(key: string): string {
    assertWellFormedKey(key);
    return inside(key);
  }

  function metaPath(key: string): string {
    assertWellFormedKey(key);
    return inside(META_DIR, `${key}.json`);
  }

  async function tempPath(): Promise<string> {
    const dir = inside(TMP_DIR);
    await mkdir(dir, { recursive: true });
    return path.join(dir, randomUUID());
  }

  async function moveIntoPlace(from: string, to: string): Promise<void> {
    await mkdir(path.dirname(to), { recursive: true });
    await rename(from, to);
  }

  async function writeMeta(key: string, meta: ObjectMeta): Promise<void> {
    const tmp = await tempPath();
    try {
      await writeFile(tmp, JSON.stringify(meta), { flag: "wx" });
      await moveIntoPlace(tmp, metaPath(key));
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
  }

  async function readMeta(key: string): Promise<ObjectMeta | undefined> {
    try {
      const parsed = metaSchema.safeParse(JSON.parse(await readFile(metaPath(key), "utf8")));
      return parsed.success ? parsed.data : undefined;
    } catch (error) {
      if (isMissing(error) || error instanceof SyntaxError) return undefined;
      throw error;
    }
  }

  function signedUrl(method: "GET" | "PUT", key: string, expiresInSeconds: number, contentType: string): string {
    return createLocalSignedUrl({ secret: signingSecret, baseUrl, method, key, expiresInSeconds, contentType });
  }

  async function write(args: {
    key: string;
    contentType: string;
    body: LocalUploadBody;
    maxBytes?: number;
  }): Promise<LocalWriteResult> {
    const target = objectPath(args.key);
    assertContentType(args.contentType);
    const maxBytes = args.maxBytes ?? Number.POSITIVE_INFINITY;
    const tooLarge = new Error("Upload exceeds the size limit");
    const hash = createHash("md5");
    let size = 0;
    const tmp = await tempPath();
    try {
      await pipeline(
        chunksOf(args.body),
        async function* limit(source: AsyncIterable<Uint8Array>) {
          for await (const chunk of source) {
            size += chunk.byteLength;
            if (size > maxBytes) throw tooLarge;
            hash.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(tmp, { flags: "wx" }),
      );
      // S3-style ETag (quoted MD5) so clients can treat both stores alike.
      const etag = `"${hash.digest("hex")}"`;
      // Metadata first: once the object is visible under its key, its content type is already there.
      await writeMeta(args.key, { contentType: args.contentType, etag });
      await moveIntoPlace(tmp, target);
      return { ok: true, size, etag };
    } catch (error) {
      await rm(tmp, { force: true });
      if (error === tooLarge) return { ok: false, reason: "too_large" };
      throw error;
    }
  }

  async function openFile(key: string): Promise<{ handle: FileHandle; size: number } | null> {
    let handle: FileHandle;
    try {
      handle = await open(objectPath(key), "r");
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    const info = await handle.stat();
    // A key that names a folder (a prefix of other keys) is not an object.
    if (!info.isFile()) {
      await handle.close();
      return null;
    }
    return { handle, size: info.size };
  }

  return {
    kind: "local",
    maxUploadBytes,

    verifyRequest({ method, key, searchParams }) {
      return verifyLocalSignature({ secret: signingSecret, method, key, searchParams });
    },

    write,

    async createUploadUrl({ key, contentType, expiresInSeconds }) {
      assertWellFormedKey(key);
      assertContentType(contentType);
      const seconds = resolveExpiry(expiresInSeconds, DEFAULT_UPLOAD_URL_SECONDS);
      return {
        url: signedUrl("PUT", key, seconds, contentType),
        method: "PUT",
        headers: { "Content-Type": contentType },
      };
    },

    async createDownloadUrl({ key, expiresInSeconds, contentType }) {
      assertWellFormedKey(key);
      if (contentType !== undefined) assertContentType(contentType);
      const seconds = resolveExpiry(expiresInSeconds, DEFAULT_DOWNLOAD_URL_SECONDS);
      return signedUrl("GET", key, seconds, contentType ?? "");
    },

    async putFile({ key, path: file, contentType }) {
      await this.put({ key, body: createReadStream(file), contentType });
    },

    async put({ key, body, contentType }) {
      const result = await write({ key, body, contentType });
      if (!result.ok) throw new Error("Local storage: write failed");
    },

    async getStream(key, options) {
      const file = await openFile(key);
      if (!file) return null;
      const range = options?.range;
      // The stream owns the handle from here on and closes it when it ends or is destroyed.
      return file.handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    },

    async head(key) {
      let info;
      try {
        info = await stat(objectPath(key));
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
      if (!info.isFile()) return null;
      const meta = await readMeta(key);
      return { size: info.size, contentType: meta?.contentType, etag: meta?.etag };
    },

    async delete(key) {
      const paths = [objectPath(key), metaPath(key)];
      for (const target of paths) {
        try {
          await rm(target, { force: true });
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
    },

    async check(timeoutMs = DEFAULT_CHECK_TIMEOUT_MS): Promise<StorageHealth> {
      async function probe(): Promise<void> {
        const tmp = await tempPath();
        await writeFile(tmp, "ok", { flag: "wx" });
        await rm(tmp, { force: true });
      }
      try {
        const outcome = await withTimeout(probe(), timeoutMs);
        if (outcome === "timeout")
          return { status: "error", detail: `Storage directory timed out after ${timeoutMs} ms` };
        return { status: "healthy" };
      } catch (error) {
        return {
          status: "error",
          detail: `Storage directory is not writable (${errorCode(error) ?? "unknown error"})`,
        };
      }
    },
  };
}
