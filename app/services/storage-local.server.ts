import { createHash, createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, readFile, rename, rm, stat, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

import { createReadableStreamFromReadable } from "@remix-run/node";
import { z } from "zod";

import {
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_DOWNLOAD_URL_SECONDS,
  DEFAULT_UPLOAD_URL_SECONDS,
  assertContentType,
  assertWellFormedKey,
  resolveExpiry,
  type ByteRange,
  type ObjectStorage,
  type StorageConfig,
  type StorageHealth,
} from "./storage.server";

export type LocalStorageConfig = Extract<StorageConfig, { kind: "local" }>;

/** Everything `put` accepts, plus the web stream a Remix action hands over as `request.body`. */
export type LocalUploadBody = Buffer | Uint8Array | NodeJS.ReadableStream | ReadableStream<Uint8Array>;

export type LocalWriteResult = { ok: true; size: number; etag: string } | { ok: false; reason: "too_large" };

export type LocalSignatureResult = { ok: true; contentType: string | undefined } | { ok: false; detail: string };

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

export const LOCAL_STORAGE_ROUTE_PREFIX = "/resources/storage/";
export const INVALID_SIGNATURE_DETAIL = "Invalid or expired signature";

const MIN_SECRET_LENGTH = 16;
// Internal folders start with a dot, which no valid key can (keys start with an area name), so objects,
// their metadata and half-written uploads can never collide.
const META_DIR = ".meta";
const TMP_DIR = ".tmp";

const metaSchema = z.object({ contentType: z.string(), etag: z.string().optional() });
type ObjectMeta = z.infer<typeof metaSchema>;

function stringToSign(method: "GET" | "PUT", key: string, exp: string, contentType: string): string {
  // Newline-separated so no field can shift into another (keys and content types never contain "\n").
  return `${method}\n${key}\n${exp}\n${contentType}`;
}

function sign(secret: string, value: string): string {
  return createHmac("sha256", secret).update(value).digest("base64url");
}

/**
 * Verifies `m`, `exp`, `ct` and `sig` of a local signed URL. The signature is checked before the expiry so
 * "expired" is only ever said about a URL this server issued.
 */
export function verifyLocalSignature(args: {
  secret: string;
  method: "GET" | "PUT";
  key: string;
  searchParams: URLSearchParams;
  nowSeconds?: number;
}): LocalSignatureResult {
  const invalid = { ok: false, detail: INVALID_SIGNATURE_DETAIL } as const;
  const { searchParams } = args;
  const m = searchParams.get("m");
  const exp = searchParams.get("exp");
  const sig = searchParams.get("sig");
  const ct = searchParams.get("ct") ?? "";
  if (m !== args.method || exp === null || sig === null || !/^\d{1,12}$/.test(exp)) return invalid;

  const expected = Buffer.from(sign(args.secret, stringToSign(args.method, args.key, exp, ct)));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid;

  const now = args.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Number(exp) < now) return { ok: false, detail: "Signed URL has expired" };
  return { ok: true, contentType: ct === "" ? undefined : ct };
}

export function isLocalStorage(storage: ObjectStorage): storage is LocalObjectStorage {
  return storage.kind === "local" && "verifyRequest" in storage && "write" in storage;
}

/**
 * Parses a single-range `Range` header against an object of `size` bytes. Returns null when the header is
 * absent, malformed or asks for several ranges (all of which RFC 9110 lets a server answer with the whole
 * object), and "unsatisfiable" for a 416.
 */
export function parseRangeHeader(header: string | null, size: number): ByteRange | "unsatisfiable" | null {
  if (header === null) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return null;
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || (last !== "" && Number(last) < start)) return "unsatisfiable";
  return { start, end };
}

/** For a Response body. Lives here so the route module imports no Node built-ins. */
export function toWebStream(stream: NodeJS.ReadableStream): ReadableStream<Uint8Array> {
  return createReadableStreamFromReadable(stream instanceof Readable ? stream : new Readable().wrap(stream));
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR";
}

function isWebStream(body: LocalUploadBody): body is ReadableStream<Uint8Array> {
  return typeof (body as Partial<ReadableStream<Uint8Array>>).getReader === "function";
}

async function* chunksOf(body: LocalUploadBody): AsyncGenerator<Uint8Array> {
  if (body instanceof Uint8Array) {
    yield body;
    return;
  }
  if (isWebStream(body)) {
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      // Release rather than cancel: cancelling a request body destroys the socket in Node adapters, and
      // the client would then never see the 413.
      reader.releaseLock();
    }
  }
  for await (const chunk of body) {
    yield typeof chunk === "string" ? Buffer.from(chunk) : chunk;
  }
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
    const exp = String(Math.floor(Date.now() / 1000) + expiresInSeconds);
    const query = new URLSearchParams({ m: method, exp });
    if (contentType !== "") query.set("ct", contentType);
    query.set("sig", sign(signingSecret, stringToSign(method, key, exp, contentType)));
    // Key segments use a URL-safe alphabet, so the path needs no escaping and matches the route's splat.
    return `${baseUrl}${LOCAL_STORAGE_ROUTE_PREFIX}${key}?${query.toString()}`;
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
