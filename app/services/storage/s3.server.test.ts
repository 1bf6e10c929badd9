// The S3 implementation against s3rver, a local S3 server. s3rver checks the access key and the expiry of
// presigned URLs but not the SigV4 signature itself, nor the signed Content-Type (STACK-NOTES pitfall 6), so
// these tests prove the SDK wiring and the URL shape; signature enforcement needs real S3 or MinIO.
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";

import { expectListsOneOwner } from "../../../tests/support/storage-helpers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { createS3Storage } from "./s3.server";
import { InvalidStorageKeyError, createStorage, makeStorageKey, type ObjectStorage } from "./storage.server";

type S3rverOptions = {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
};
type S3rverInstance = { run(): Promise<AddressInfo>; close(): Promise<void> };
// s3rver ships no types and is CommonJS.
const S3rver = createRequire(import.meta.url)("s3rver") as new (options: S3rverOptions) => S3rverInstance;

const BUCKET = "skribent-test";
const OWNER = "owner-1";

function md5Etag(bytes: Uint8Array): string {
  return `"${createHash("md5").update(bytes).digest("hex")}"`;
}

function bytesOf(length: number): Buffer {
  const buffer = Buffer.alloc(length);
  for (let i = 0; i < length; i++) buffer[i] = (i * 17 + 5) % 256;
  return buffer;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  return port;
}

describe("S3 storage against s3rver", () => {
  let server: S3rverInstance;
  let dir: string;
  let endpoint: string;
  let port: number;
  let storage: ObjectStorage;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skribent-s3rver-"));
    server = new S3rver({
      port: 0,
      address: "127.0.0.1",
      silent: true,
      directory: dir,
      configureBuckets: [{ name: BUCKET }],
    });
    ({ port } = await server.run());
    endpoint = `http://127.0.0.1:${port}`;
    storage = createStorage({
      kind: "s3",
      bucket: BUCKET,
      region: "us-east-1",
      endpoint,
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
    });
  });

  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("round-trips put, head, getStream and delete", async () => {
    expect(storage.kind).toBe("s3");
    const key = makeStorageKey({ ownerId: OWNER, area: "transcripts", extension: ".json" });
    const bytes = bytesOf(5000);
    await storage.put({ key, body: bytes, contentType: "application/json" });

    expect(await storage.head(key)).toEqual({
      size: 5000,
      contentType: "application/json",
      etag: md5Etag(bytes),
    });
    expect((await readAll((await storage.getStream(key))!)).equals(bytes)).toBe(true);
    const part = await storage.getStream(key, { range: { start: 100, end: 149 } });
    expect((await readAll(part!)).equals(bytes.subarray(100, 150))).toBe(true);

    await storage.delete(key);
    expect(await storage.head(key)).toBeNull();
    expect(await storage.getStream(key)).toBeNull();
    await expect(storage.delete(key)).resolves.toBeUndefined();
  });

  it("lists the keys of one owner in one area, and no wider", async () => {
    await expectListsOneOwner(storage, 3);
  }, 60_000);

  it("stores a Node stream body of unknown length", async () => {
    const key = makeStorageKey({ ownerId: OWNER, area: "arztbriefe", extension: ".txt" });
    await storage.put({
      key,
      body: Readable.from([Buffer.from("Sehr geehrte "), Buffer.from("Kollegin")]),
      contentType: "text/plain",
    });
    expect(await storage.head(key)).toMatchObject({ size: 21, contentType: "text/plain" });
    expect((await readAll((await storage.getStream(key))!)).toString()).toBe("Sehr geehrte Kollegin");
  });

  it("uploads through a presigned PUT and downloads through a presigned GET", async () => {
    const key = makeStorageKey({ ownerId: OWNER, area: "audio", extension: ".wav" });
    const upload = await storage.createUploadUrl({ key, contentType: "audio/wav" });
    expect(upload.method).toBe("PUT");
    expect(upload.headers).toEqual({ "Content-Type": "audio/wav" });

    const signed = new URL(upload.url);
    expect(signed.origin).toBe(endpoint);
    // Path-style, because an endpoint was given.
    expect(signed.pathname).toBe(`/${BUCKET}/${key}`);
    expect(signed.searchParams.get("X-Amz-Expires")).toBe("900");
    expect(signed.searchParams.get("X-Amz-SignedHeaders")).toBe("content-type;host");
    // A checksum the browser cannot compute would make every browser upload fail against real S3.
    expect([...signed.searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);

    const bytes = bytesOf(70_000);
    const put = await fetch(upload.url, {
      method: upload.method,
      headers: upload.headers,
      body: new Uint8Array(bytes),
    });
    expect(put.status).toBe(200);
    expect(put.headers.get("ETag")).toBe(md5Etag(bytes));
    expect(await storage.head(key)).toEqual({ size: 70_000, contentType: "audio/wav", etag: md5Etag(bytes) });

    const downloadUrl = await storage.createDownloadUrl({ key });
    expect(new URL(downloadUrl).searchParams.get("X-Amz-Expires")).toBe("300");
    const get = await fetch(downloadUrl);
    expect(get.status).toBe(200);
    expect(get.headers.get("Content-Type")).toBe("audio/wav");
    expect(Buffer.from(await get.arrayBuffer()).equals(bytes)).toBe(true);

    const ranged = await fetch(downloadUrl, { headers: { Range: "bytes=10-19" } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);

    const overridden = await fetch(await storage.createDownloadUrl({ key, contentType: "application/octet-stream" }));
    expect(overridden.headers.get("Content-Type")).toBe("application/octet-stream");
    await overridden.arrayBuffer();
  });

  it("signs browser URLs for the public endpoint when one is configured", async () => {
    const publicEndpoint = `http://localhost:${port}`;
    const split = createS3Storage({
      kind: "s3",
      bucket: BUCKET,
      region: "us-east-1",
      endpoint,
      publicEndpoint,
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
    });
    const key = makeStorageKey({ ownerId: OWNER, area: "context", extension: ".pdf" });
    const upload = await split.createUploadUrl({ key, contentType: "application/pdf" });
    expect(new URL(upload.url).origin).toBe(publicEndpoint);
    expect(new URL(await split.createDownloadUrl({ key })).origin).toBe(publicEndpoint);
    // The server side keeps using the internal endpoint.
    await split.put({ key, body: Buffer.from("%PDF-1.4"), contentType: "application/pdf" });
    expect(await storage.head(key)).toMatchObject({ size: 8, contentType: "application/pdf" });
  });

  it("refuses malformed keys before anything reaches the bucket", async () => {
    for (const key of ["audio/owner-1/../owner-2/x.mp3", "/audio/owner-1/x.mp3", "audio\\owner-1\\x.mp3"]) {
      await expect(storage.put({ key, body: Buffer.from("x"), contentType: "text/plain" })).rejects.toThrow(
        InvalidStorageKeyError,
      );
    }
    expect(await storage.head("audio/owner-2/x.mp3")).toBeNull();
  });

  it("check() is healthy against the running server", async () => {
    expect(await storage.check(2000)).toEqual({ status: "healthy" });
  });

  it("check() reports a missing bucket", async () => {
    const other = createS3Storage({
      kind: "s3",
      bucket: "no-such-bucket",
      region: "us-east-1",
      endpoint,
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
    });
    expect(await other.check(2000)).toEqual({ status: "error", detail: "Bucket not found" });
  });

  it("check() reports an error for a closed port within the time-out, without secrets", async () => {
    const secret = "very-secret-access-key";
    const unreachable = createS3Storage({
      kind: "s3",
      bucket: BUCKET,
      region: "us-east-1",
      endpoint: `http://127.0.0.1:${await closedPort()}`,
      accessKeyId: "S3RVER",
      secretAccessKey: secret,
    });
    const started = performance.now();
    const health = await unreachable.check(800);
    const elapsed = performance.now() - started;
    expect(health.status).toBe("error");
    expect(health.detail).toMatch(/^(Cannot reach storage endpoint \(ECONNREFUSED\)|No answer within 800 ms)$/);
    expect(health.detail).not.toContain(secret);
    // Well short of a hang; the margin is for a loaded two-core CI machine (the SDK loads and signs first).
    expect(elapsed).toBeLessThan(5_000);
  });

  it("check() gives up on a server that accepts connections but never answers", async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port: silentPort } = silent.address() as AddressInfo;
      const hanging = createS3Storage({
        kind: "s3",
        bucket: BUCKET,
        region: "us-east-1",
        endpoint: `http://127.0.0.1:${silentPort}`,
        accessKeyId: "S3RVER",
        secretAccessKey: "S3RVER",
      });
      const started = performance.now();
      const health = await hanging.check(300);
      const elapsed = performance.now() - started;
      expect(health).toEqual({ status: "error", detail: "No answer within 300 ms" });
      expect(elapsed).toBeGreaterThanOrEqual(290);
      // The silent server never answers: without the time-out this would hang (margin: a loaded CI machine).
      expect(elapsed).toBeLessThan(5_000);
      // The SDK saw the request: the time-out, not a refused connection, ended it.
      expect(sockets.size).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
