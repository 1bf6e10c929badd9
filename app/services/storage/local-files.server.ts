import { createHash, randomUUID } from "node:crypto";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";

import { z } from "zod";

import { chunksOf } from "./http.server";
import { assertWellFormedKey } from "./keys.server";
import type { LocalUploadBody } from "./types.server";

// The local object store's directory as storage/local.server.ts uses it: where objects, their metadata and
// temp files live, and how a body streams into a temp file (counted, hashed, capped).

// Internal folders start with a dot, which no valid key can (keys start with an area name), so objects,
// their metadata and half-written uploads can never collide.
const META_DIR = ".meta";
const TMP_DIR = ".tmp";
export const MULTIPART_DIR = ".multipart";

const metaSchema = z.object({ contentType: z.string(), etag: z.string().optional() });
type ObjectMeta = z.infer<typeof metaSchema>;

export type LocalFiles = ReturnType<typeof createLocalFiles>;

export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

export function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR";
}

export function createLocalFiles(root: string) {
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

  /** Streams `body` into a fresh temp file, counting and hashing; the caller moves or removes it. */
  async function streamToTemp(
    body: LocalUploadBody,
    maxBytes: number,
  ): Promise<{ ok: true; tmp: string; size: number; etag: string } | { ok: false; reason: "too_large" }> {
    const tooLarge = new Error("Upload exceeds the size limit");
    const hash = createHash("md5");
    let size = 0;
    const tmp = await tempPath();
    const out = createWriteStream(tmp, { flags: "wx" });
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
        out,
      );
      // S3-style ETag (quoted MD5) so clients can treat both stores alike.
      return { ok: true, tmp, size, etag: `"${hash.digest("hex")}"` };
    } catch (error) {
      // The stream may still be opening the file when the pipeline fails: removed before it exists, the file would
      // be created afterwards and left behind (seen under load). Its close comes after its open.
      if (!out.closed) await once(out, "close").catch(() => undefined);
      await rm(tmp, { force: true });
      if (error === tooLarge) return { ok: false, reason: "too_large" };
      throw error;
    }
  }

  return { inside, objectPath, metaPath, tempPath, moveIntoPlace, writeMeta, readMeta, streamToTemp };
}
