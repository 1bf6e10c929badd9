import { createReadStream } from "node:fs";
import { createHash, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, readFile, readdir, rename, rm, stat, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

import { z } from "zod";

import { chunksOf } from "./storage-http.server";
import {
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_DOWNLOAD_URL_SECONDS,
  DEFAULT_UPLOAD_URL_SECONDS,
  assertContentType,
  assertOwnerPrefix,
  assertWellFormedKey,
  resolveExpiry,
} from "./storage-keys.server";
import { createLocalSignedUrl, verifyLocalSignature, type LocalSignatureResult } from "./storage-local-signing.server";
import {
  MAX_PART_NUMBER,
  MIN_PART_BYTES,
  type ObjectStorage,
  type StorageConfig,
  type StorageHealth,
  type UploadedPart,
} from "./storage-types.server";

export type LocalStorageConfig = Extract<StorageConfig, { kind: "local" }>;

/** Everything `put` accepts, plus the web stream a Remix action hands over as `request.body`. */
export type LocalUploadBody = Buffer | Uint8Array | NodeJS.ReadableStream | ReadableStream<Uint8Array>;

export type LocalWriteResult = { ok: true; size: number; etag: string } | { ok: false; reason: "too_large" };
export type LocalPartWriteResult = LocalWriteResult | { ok: false; reason: "no_such_upload" };

/** A multipart completion the store refuses, as S3 does (InvalidPart, InvalidPartOrder, EntityTooSmall). */
export class MultipartRejectedError extends Error {
  constructor(reason: string) {
    super(`Multipart upload rejected: ${reason}`);
    this.name = "MultipartRejectedError";
  }
}

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
  /** One part of a multipart upload; a part sent again replaces the earlier one, as in S3. */
  writePart(args: {
    key: string;
    uploadId: string;
    partNumber: number;
    body: LocalUploadBody;
    maxBytes?: number;
  }): Promise<LocalPartWriteResult>;
}

const MIN_SECRET_LENGTH = 16;
// Internal folders start with a dot, which no valid key can (keys start with an area name), so objects,
// their metadata and half-written uploads can never collide.
const META_DIR = ".meta";
const TMP_DIR = ".tmp";
const MULTIPART_DIR = ".multipart";
const UPLOAD_ID_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

const metaSchema = z.object({ contentType: z.string(), etag: z.string().optional() });
const manifestSchema = z.object({ key: z.string(), contentType: z.string() });
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

  /** Streams `body` into a fresh temp file, counting and hashing; the caller moves or removes it. */
  async function streamToTemp(
    body: LocalUploadBody,
    maxBytes: number,
  ): Promise<{ ok: true; tmp: string; size: number; etag: string } | { ok: false; reason: "too_large" }> {
    const tooLarge = new Error("Upload exceeds the size limit");
    const hash = createHash("md5");
    let size = 0;
    const tmp = await tempPath();
    try {
      await pipeline(
        chunksOf(body),
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
      return { ok: true, tmp, size, etag: `"${hash.digest("hex")}"` };
    } catch (error) {
      await rm(tmp, { force: true });
      if (error === tooLarge) return { ok: false, reason: "too_large" };
      throw error;
    }
  }

  async function write(args: {
    key: string;
    contentType: string;
    body: LocalUploadBody;
    maxBytes?: number;
  }): Promise<LocalWriteResult> {
    const target = objectPath(args.key);
    assertContentType(args.contentType);
    const written = await streamToTemp(args.body, args.maxBytes ?? Number.POSITIVE_INFINITY);
    if (!written.ok) return written;
    try {
      // Metadata first: once the object is visible under its key, its content type is already there.
      await writeMeta(args.key, { contentType: args.contentType, etag: written.etag });
      await moveIntoPlace(written.tmp, target);
      return { ok: true, size: written.size, etag: written.etag };
    } catch (error) {
      await rm(written.tmp, { force: true });
      throw error;
    }
  }

  function uploadDir(uploadId: string): string {
    if (!UPLOAD_ID_PATTERN.test(uploadId)) throw new MultipartRejectedError("malformed upload id");
    return inside(MULTIPART_DIR, uploadId);
  }

  function checkPartNumber(partNumber: number): void {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
      throw new MultipartRejectedError("part number out of range");
    }
  }

  /** The upload's manifest, or undefined when there is no such upload for this key. */
  async function readManifest(key: string, uploadId: string) {
    assertWellFormedKey(key);
    try {
      const raw = JSON.parse(await readFile(path.join(uploadDir(uploadId), "manifest.json"), "utf8"));
      const parsed = manifestSchema.safeParse(raw);
      return parsed.success && parsed.data.key === key ? parsed.data : undefined;
    } catch (error) {
      if (isMissing(error) || error instanceof SyntaxError) return undefined;
      throw error;
    }
  }

  async function writePart(args: {
    key: string;
    uploadId: string;
    partNumber: number;
    body: LocalUploadBody;
    maxBytes?: number;
  }): Promise<LocalPartWriteResult> {
    checkPartNumber(args.partNumber);
    if (!(await readManifest(args.key, args.uploadId))) return { ok: false, reason: "no_such_upload" };
    const written = await streamToTemp(args.body, args.maxBytes ?? Number.POSITIVE_INFINITY);
    if (!written.ok) return written;
    const dir = uploadDir(args.uploadId);
    try {
      // The ETag beside the part first, then the part: a part is only listed once both are in place.
      await writeFile(path.join(dir, `${args.partNumber}.etag`), written.etag);
      await rename(written.tmp, path.join(dir, String(args.partNumber)));
      return { ok: true, size: written.size, etag: written.etag };
    } catch (error) {
      await rm(written.tmp, { force: true });
      // Aborted or completed while the part streamed in.
      if (isMissing(error)) return { ok: false, reason: "no_such_upload" };
      throw error;
    }
  }

  async function listParts({ key, uploadId }: { key: string; uploadId: string }): Promise<UploadedPart[] | null> {
    if (!(await readManifest(key, uploadId))) return null;
    const dir = uploadDir(uploadId);
    const parts: UploadedPart[] = [];
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const [info, etag] = await Promise.all([
          stat(path.join(dir, name)),
          readFile(path.join(dir, `${name}.etag`), "utf8"),
        ]);
        parts.push({ partNumber: Number(name), size: info.size, etag });
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
    return parts.sort((a, b) => a.partNumber - b.partNumber);
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
    writePart,

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

    async list(prefix) {
      assertOwnerPrefix(prefix);
      let entries;
      try {
        entries = await readdir(inside(prefix), { recursive: true, withFileTypes: true });
      } catch (error) {
        if (isMissing(error)) return [];
        throw error;
      }
      return entries
        .filter((entry) => entry.isFile())
        .map((entry) =>
          path
            .relative(root, path.join(entry.parentPath ?? entry.path, entry.name))
            .split(path.sep)
            .join("/"),
        );
    },

    async createMultipartUpload({ key, contentType }) {
      assertWellFormedKey(key);
      assertContentType(contentType);
      const uploadId = randomUUID();
      const dir = uploadDir(uploadId);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, "manifest.json"), JSON.stringify({ key, contentType }), { flag: "wx" });
      return { uploadId };
    },

    async createPartUploadUrl({ key, uploadId, partNumber, expiresInSeconds }) {
      assertWellFormedKey(key);
      uploadDir(uploadId);
      checkPartNumber(partNumber);
      const seconds = resolveExpiry(expiresInSeconds, DEFAULT_UPLOAD_URL_SECONDS);
      return {
        url: createLocalSignedUrl({
          secret: signingSecret,
          baseUrl,
          method: "PUT",
          key,
          expiresInSeconds: seconds,
          contentType: "",
          part: { uploadId, partNumber },
        }),
        method: "PUT",
      };
    },

    listParts,

    async completeMultipartUpload({ key, uploadId, parts }) {
      const manifest = await readManifest(key, uploadId);
      if (!manifest) throw new MultipartRejectedError("no such upload");
      if (parts.length === 0) throw new MultipartRejectedError("no parts");
      const held = new Map((await listParts({ key, uploadId }))?.map((p) => [p.partNumber, p]));
      parts.forEach((part, index) => {
        const stored = held.get(part.partNumber);
        if (!stored || stored.etag !== part.etag) throw new MultipartRejectedError("invalid part");
        if (index > 0 && part.partNumber <= parts[index - 1]!.partNumber) {
          throw new MultipartRejectedError("invalid part order");
        }
        if (index < parts.length - 1 && stored.size < MIN_PART_BYTES)
          throw new MultipartRejectedError("part too small");
      });
      const dir = uploadDir(uploadId);
      const files = parts.map((part) => path.join(dir, String(part.partNumber)));
      async function* joined() {
        for (const file of files) yield* createReadStream(file);
      }
      const written = await streamToTemp(Readable.from(joined()), Number.POSITIVE_INFINITY);
      if (!written.ok) throw new MultipartRejectedError("too large");
      try {
        await writeMeta(key, { contentType: manifest.contentType, etag: written.etag });
        await moveIntoPlace(written.tmp, objectPath(key));
      } catch (error) {
        await rm(written.tmp, { force: true });
        throw error;
      }
      await rm(dir, { recursive: true, force: true });
    },

    async abortMultipartUpload({ key, uploadId }) {
      if (!(await readManifest(key, uploadId))) return;
      await rm(uploadDir(uploadId), { recursive: true, force: true });
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
