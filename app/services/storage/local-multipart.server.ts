import { createReadStream } from "node:fs";
import { randomUUID } from "node:crypto";
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";

import { z } from "zod";

import { assertContentType, assertWellFormedKey } from "./keys.server";
import { MULTIPART_DIR, isMissing, type LocalFiles } from "./local-files.server";
import type { LocalObjectStorage, LocalPartWriteResult, LocalUploadBody } from "./types.server";
import { MAX_PART_NUMBER, MIN_PART_BYTES, type UploadedPart } from "./types.server";

// Multipart uploads in the local object store (storage/local.server.ts), as S3 runs them: each upload is a
// folder under .multipart holding its manifest (key, content type) and its parts, each part with its ETag beside
// it; completing joins the parts into the object and removes the folder.

const UPLOAD_ID_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

const manifestSchema = z.object({ key: z.string(), contentType: z.string() });

/** A multipart completion the store refuses, as S3 does (InvalidPart, InvalidPartOrder, EntityTooSmall). */
export class MultipartRejectedError extends Error {
  constructor(reason: string) {
    super(`Multipart upload rejected: ${reason}`);
    this.name = "MultipartRejectedError";
  }
}

export function checkPartNumber(partNumber: number): void {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
    throw new MultipartRejectedError("part number out of range");
  }
}

export function createLocalMultipart(
  store: LocalFiles,
): Pick<
  LocalObjectStorage,
  "writePart" | "createMultipartUpload" | "listParts" | "completeMultipartUpload" | "abortMultipartUpload"
> & { uploadDir(uploadId: string): string } {
  const { inside, objectPath, moveIntoPlace, writeMeta, streamToTemp } = store;

  function uploadDir(uploadId: string): string {
    if (!UPLOAD_ID_PATTERN.test(uploadId)) throw new MultipartRejectedError("malformed upload id");
    return inside(MULTIPART_DIR, uploadId);
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

  return {
    uploadDir,
    writePart,

    async createMultipartUpload({ key, contentType }) {
      assertWellFormedKey(key);
      assertContentType(contentType);
      const uploadId = randomUUID();
      const dir = uploadDir(uploadId);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, "manifest.json"), JSON.stringify({ key, contentType }), { flag: "wx" });
      return { uploadId };
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
  };
}
