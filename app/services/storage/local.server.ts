import { createReadStream } from "node:fs";
import { open, readdir, rm, stat, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";

import {
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_UPLOAD_URL_SECONDS,
  assertContentType,
  assertOwnerPrefix,
  assertWellFormedKey,
  resolveExpiry,
  signedUrlSeconds,
} from "./keys.server";
import { createLocalFiles, errorCode, isMissing } from "./local-files.server";
import { checkPartNumber, createLocalMultipart } from "./local-multipart.server";
import { createLocalSignedUrl, verifyLocalSignature } from "./local-signing.server";
import type {
  LocalObjectStorage,
  LocalStorageConfig,
  LocalUploadBody,
  LocalWriteResult,
  ObjectStorage,
  StorageHealth,
} from "./types.server";

export type { LocalObjectStorage } from "./types.server";

const MIN_SECRET_LENGTH = 16;

export function isLocalStorage(storage: ObjectStorage): storage is LocalObjectStorage {
  return storage.kind === "local" && "verifyRequest" in storage && "write" in storage;
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
  const secrets: readonly unknown[] = Array.isArray(config.signingSecrets) ? config.signingSecrets : [];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== "string" || s.length < MIN_SECRET_LENGTH)) {
    throw new Error(`Local storage: signingSecrets must each be at least ${MIN_SECRET_LENGTH} characters`);
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
  // The first secret signs; every one is accepted until it leaves the list (rotation, ASVS 11.2.2).
  const { signingSecrets, maxUploadBytes } = config;
  const signingSecret = signingSecrets[0];
  const files = createLocalFiles(root);
  const { inside, objectPath, metaPath, tempPath, moveIntoPlace, writeMeta, readMeta, streamToTemp } = files;
  const multipart = createLocalMultipart(files);

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
      return verifyLocalSignature({ secrets: signingSecrets, method, key, searchParams });
    },

    write,
    writePart: multipart.writePart,

    async createUploadUrl({ key, contentType, expiresInSeconds }) {
      const seconds = signedUrlSeconds("upload", { key, contentType, expiresInSeconds });
      return {
        url: signedUrl("PUT", key, seconds, contentType),
        method: "PUT",
        headers: { "Content-Type": contentType },
      };
    },

    async createDownloadUrl({ key, expiresInSeconds, contentType }) {
      const seconds = signedUrlSeconds("download", { key, contentType, expiresInSeconds });
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

    createMultipartUpload: multipart.createMultipartUpload,

    async createPartUploadUrl({ key, uploadId, partNumber, expiresInSeconds }) {
      assertWellFormedKey(key);
      multipart.uploadDir(uploadId);
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

    listParts: multipart.listParts,
    completeMultipartUpload: multipart.completeMultipartUpload,
    abortMultipartUpload: multipart.abortMultipartUpload,

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
