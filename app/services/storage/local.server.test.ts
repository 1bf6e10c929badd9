import { stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";

import { describe, expect, it } from "vitest";

import { createLocalStorage, type LocalObjectStorage } from "./local.server";
import { verifyLocalSignature } from "./local-signing.server";
import {
  BASE_URL,
  SECRET,
  bytesOf,
  md5Etag,
  readAll,
  expectListsOneOwner,
  localStoreForEachTest,
} from "../../../tests/support/storage-helpers";
import { createStorage, makeStorageKey } from "./storage.server";

// The signed URLs and the resource route that serves them: storage-route-*.server.test.ts.
describe("local storage", () => {
  const world = localStoreForEachTest();
  const owner = "owner-1";

  it("is what createStorage returns for a local config", () => {
    const made = createStorage({
      kind: "local",
      directory: world.storeDir,
      publicBaseUrl: BASE_URL,
      signingSecrets: [SECRET],
      maxUploadBytes: 1,
    });
    expect(made.kind).toBe("local");
  });

  it("refuses a short signing secret", () => {
    expect(() =>
      createLocalStorage({
        kind: "local",
        directory: world.storeDir,
        publicBaseUrl: BASE_URL,
        signingSecrets: [SECRET, "short"],
        maxUploadBytes: 1,
      }),
    ).toThrow(/signingSecrets must each be at least 16/);
  });

  it("round-trips put, head, getStream and delete", async () => {
    const key = makeStorageKey({ ownerId: owner, area: "transcripts", extension: ".json" });
    const bytes = bytesOf(3000);
    await world.storage.put({ key, body: bytes, contentType: "application/json" });

    expect(await world.storage.head(key)).toEqual({
      size: 3000,
      contentType: "application/json",
      etag: md5Etag(bytes),
    });
    const stream = await world.storage.getStream(key);
    expect(stream).not.toBeNull();
    expect((await readAll(stream!)).equals(bytes)).toBe(true);
    const part = await world.storage.getStream(key, { range: { start: 10, end: 19 } });
    expect((await readAll(part!)).equals(bytes.subarray(10, 20))).toBe(true);
    // The object sits at its key inside the directory.
    expect((await stat(path.join(world.storeDir, key))).size).toBe(3000);

    await world.storage.delete(key);
    expect(await world.storage.head(key)).toBeNull();
    expect(await world.storage.getStream(key)).toBeNull();
    await expect(world.storage.delete(key)).resolves.toBeUndefined();
  });

  it("stores a Node stream body and replaces an existing object", async () => {
    const key = makeStorageKey({ ownerId: owner, area: "arztbriefe", extension: ".txt" });
    await world.storage.put({ key, body: Buffer.from("first"), contentType: "text/plain" });
    await world.storage.put({
      key,
      body: Readable.from([Buffer.from("sec"), Buffer.from("ond!")]),
      contentType: "text/markdown",
    });
    expect(await world.storage.head(key)).toMatchObject({ size: 7, contentType: "text/markdown" });
    expect((await readAll((await world.storage.getStream(key))!)).toString()).toBe("second!");
    expect(await world.leftoverTempFiles()).toEqual([]);
  });

  it("lists the keys of one owner in one area, and no wider", async () => {
    await expectListsOneOwner(world.storage, 3);
  });

  it("reports missing objects as null", async () => {
    const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
    expect(await world.storage.head(key)).toBeNull();
    expect(await world.storage.getStream(key)).toBeNull();
    // A key that names a folder holding other objects is not an object either.
    await world.storage.put({
      key: `audio/${owner}/folder/x.txt`,
      body: Buffer.from("x"),
      contentType: "text/plain",
    });
    expect(await world.storage.head(`audio/${owner}/folder`)).toBeNull();
    expect(await world.storage.getStream(`audio/${owner}/folder`)).toBeNull();
  });

  it("check() is healthy for a writable directory and an error when it cannot be created", async () => {
    expect(await world.storage.check()).toEqual({ status: "healthy" });
    const blocker = path.join(world.dir, "a-file");
    await writeFile(blocker, "not a directory");
    const broken = createLocalStorage({
      kind: "local",
      directory: path.join(blocker, "store"),
      publicBaseUrl: BASE_URL,
      signingSecrets: [SECRET],
      maxUploadBytes: 1,
    });
    const health = await broken.check(1000);
    expect(health.status).toBe("error");
    expect(health.detail).toMatch(/not writable \(ENOTDIR\)/);
    expect(health.detail).not.toContain(SECRET);
  });

  it("verifyLocalSignature checks method, expiry and signature with the given clock", async () => {
    const key = makeStorageKey({ ownerId: owner, area: "context", extension: ".pdf" });
    const upload = await world.storage.createUploadUrl({
      key,
      contentType: "application/pdf",
      expiresInSeconds: 60,
    });
    const { searchParams } = new URL(upload.url);
    const exp = Number(searchParams.get("exp"));
    const base = { secrets: [SECRET], method: "PUT" as const, key, searchParams };
    expect(verifyLocalSignature({ ...base, nowSeconds: exp })).toEqual({
      ok: true,
      contentType: "application/pdf",
    });
    expect(verifyLocalSignature({ ...base, nowSeconds: exp + 1 })).toEqual({
      ok: false,
      detail: "Signed URL has expired",
    });
    expect(verifyLocalSignature({ ...base, secrets: [`${SECRET}x`], nowSeconds: exp }).ok).toBe(false);
    expect(verifyLocalSignature({ ...base, method: "GET", nowSeconds: exp }).ok).toBe(false);
  });

  describe("with a rotated signing secret (ASVS 11.2.2)", () => {
    const OLD = SECRET;
    const NEW = "a-newer-secret-of-sufficient-length";
    const storeWith = (signingSecrets: [string, ...string[]]) =>
      createLocalStorage({
        kind: "local",
        directory: world.storeDir,
        publicBaseUrl: BASE_URL,
        signingSecrets,
        maxUploadBytes: 4096,
      });
    const check = (store: LocalObjectStorage, method: "GET" | "PUT", key: string, url: string) =>
      store.verifyRequest({ method, key, searchParams: new URL(url).searchParams });

    it("accepts URLs signed with the old secret once a new one is put first, and refuses them once it is removed", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".webm" });
      const download = await world.storage.createDownloadUrl({ key, expiresInSeconds: 60 });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/webm" });
      const part = await world.storage.createPartUploadUrl({ key, uploadId: "u-1", partNumber: 2 });

      const rotated = storeWith([NEW, OLD]);
      expect(check(rotated, "GET", key, download).ok).toBe(true);
      expect(check(rotated, "PUT", key, upload.url)).toEqual({ ok: true, contentType: "audio/webm", part: undefined });
      expect(check(rotated, "PUT", key, part.url)).toMatchObject({
        ok: true,
        part: { uploadId: "u-1", partNumber: 2 },
      });

      const retired = storeWith([NEW]);
      for (const [method, url] of [
        ["GET", download],
        ["PUT", upload.url],
        ["PUT", part.url],
      ] as const) {
        expect(check(retired, method, key, url)).toEqual({ ok: false, detail: "Invalid or expired signature" });
      }
    });

    it("signs new URLs with the first secret of the list", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "context", extension: ".pdf" });
      const rotated = storeWith([NEW, OLD]);
      const download = await rotated.createDownloadUrl({ key, expiresInSeconds: 60 });
      const upload = await rotated.createUploadUrl({ key, contentType: "application/pdf" });
      const part = await rotated.createPartUploadUrl({ key, uploadId: "u-2", partNumber: 1 });
      for (const [method, url] of [
        ["GET", download],
        ["PUT", upload.url],
        ["PUT", part.url],
      ] as const) {
        expect(check(storeWith([NEW]), method, key, url).ok).toBe(true);
        expect(check(storeWith([OLD]), method, key, url).ok).toBe(false);
      }
    });
  });
});
