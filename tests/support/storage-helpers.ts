/**
 * Shared fixtures for the storage test files (storage-*.server.test.ts). Not a test file itself.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { afterEach, beforeEach, expect, vi } from "vitest";

import { action, loader } from "~/routes/resources.storage.$";

import { createLocalStorage, type LocalObjectStorage } from "~/services/storage/local.server";
import { LOCAL_STORAGE_ROUTE_PREFIX } from "~/services/storage/local-signing.server";
import { setStorage } from "~/services/storage/storage.server";

export const SECRET = "test-secret-of-sufficient-length";
export const BASE_URL = "http://skribent.test";

/** A signature that differs from `value` whatever it is: its first character changed (a fixed suffix can match). */
export function flipFirstChar(value: string): string {
  return (value[0] === "A" ? "B" : "A") + value.slice(1);
}

export function md5Etag(bytes: Uint8Array): string {
  return `"${createHash("md5").update(bytes).digest("hex")}"`;
}

export function bytesOf(length: number, seed = 7): Buffer {
  const buffer = Buffer.alloc(length);
  for (let i = 0; i < length; i++) buffer[i] = (i * 31 + seed) % 256;
  return buffer;
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/** A pull-based byte stream that records how many chunks the consumer actually asked for. */
export function countingStream(chunks: Uint8Array[]): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index];
      if (chunk === undefined) {
        controller.close();
        return;
      }
      index++;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => index };
}

export function splitInto(buffer: Buffer, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < buffer.length; i += size) chunks.push(new Uint8Array(buffer.subarray(i, i + size)));
  return chunks;
}

export function routeParams(url: string): { "*": string } {
  const { pathname } = new URL(url);
  expect(pathname.startsWith(LOCAL_STORAGE_ROUTE_PREFIX)).toBe(true);
  return { "*": pathname.slice(LOCAL_STORAGE_ROUTE_PREFIX.length) };
}

export async function putThroughRoute(
  url: string,
  body: ReadableStream<Uint8Array> | Uint8Array,
  headers: Record<string, string>,
): Promise<Response> {
  // A copy gives the ArrayBuffer-backed view that the DOM's BodyInit type asks for.
  const payload = body instanceof Uint8Array ? new Uint8Array(body) : body;
  const init: RequestInit & { duplex: "half" } = { method: "PUT", body: payload, headers, duplex: "half" };
  return action({ request: new Request(url, init), params: routeParams(url), context: {} });
}

export async function getThroughRoute(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return loader({ request: new Request(url, { headers }), params: routeParams(url), context: {} });
}

export async function detailOf(response: Response): Promise<unknown> {
  return ((await response.json()) as { detail?: unknown }).detail;
}
export interface LocalStoreFixture {
  dir: string;
  storeDir: string;
  storage: LocalObjectStorage;
}

/** A fresh local store in a temp dir (4 KiB upload limit), installed as the app's storage. */
export async function setUpLocalStore(): Promise<LocalStoreFixture> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "skribent-storage-local-"));
  const storeDir = path.join(dir, "nested", "store");
  const storage = createLocalStorage({
    kind: "local",
    directory: storeDir,
    publicBaseUrl: `${BASE_URL}/`,
    signingSecrets: [SECRET],
    maxUploadBytes: 4096,
  });
  setStorage(storage);
  return { dir, storeDir, storage };
}

/** What a local-store test works with: the store of the current test, and the temp files it left. */
export type LocalStoreWorld = LocalStoreFixture & { leftoverTempFiles(): Promise<string[]> };

/**
 * For a describe block: a fresh local store (see setUpLocalStore) before each test; after it, the real clock back
 * (a test may fake it) and the store's temp dir removed.
 */
export function localStoreForEachTest(): LocalStoreWorld {
  const world = {
    leftoverTempFiles: () => leftoverTempFilesIn(world.storeDir),
  } as LocalStoreWorld;
  beforeEach(async () => {
    Object.assign(world, await setUpLocalStore());
  });
  afterEach(async () => {
    vi.useRealTimers();
    await rm(world.dir, { recursive: true, force: true });
  });
  return world;
}

/** Files left in the store's temp folder (none after a finished or aborted upload). */
export async function leftoverTempFilesIn(storeDir: string): Promise<string[]> {
  try {
    return await readdir(path.join(storeDir, ".tmp"));
  } catch {
    return [];
  }
}

/**
 * `list` as both stores must answer it: every key of one owner in one area (several pages' worth on S3 when
 * `many` is large), none of another owner or area, nothing after deletion, and no prefix that reaches wider.
 */
export async function expectListsOneOwner(storage: import("~/services/storage/types.server").ObjectStorage, many = 3) {
  const { makeStorageKey, ownerPrefix } = await import("~/services/storage/keys.server");
  const owner = `list-${Math.random().toString(36).slice(2, 10)}`;
  const mine = Array.from({ length: many }, () => makeStorageKey({ ownerId: owner, area: "audio", extension: ".wav" }));
  const others = [
    makeStorageKey({ ownerId: `${owner}x`, area: "audio", extension: ".wav" }),
    makeStorageKey({ ownerId: owner, area: "transcripts", extension: ".json" }),
  ];
  for (const key of [...mine, ...others]) await storage.put({ key, body: Buffer.from(key), contentType: "audio/wav" });
  expect((await storage.list(ownerPrefix("audio", owner))).sort()).toEqual([...mine].sort());
  expect(await storage.list(ownerPrefix("transcripts", owner))).toEqual([others[1]]);
  for (const key of mine) await storage.delete(key);
  expect(await storage.list(ownerPrefix("audio", owner))).toEqual([]);
  expect(await storage.list(ownerPrefix("context", owner))).toEqual([]);
  for (const wide of [
    "audio/",
    "",
    `audio/${owner}`,
    `audio/${owner}/x/`,
    `../audio/${owner}/`,
    `audio/../${owner}/`,
  ]) {
    await expect(storage.list(wide), wide).rejects.toThrow("Invalid storage key: bad prefix");
  }
  for (const key of others) await storage.delete(key);
}
