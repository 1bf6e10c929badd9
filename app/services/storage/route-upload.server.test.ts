import { describe, expect, it, vi } from "vitest";

import { action } from "~/routes/resources.storage.$";

import {
  BASE_URL,
  bytesOf,
  countingStream,
  detailOf,
  md5Etag,
  putThroughRoute,
  readAll,
  routeParams,
  splitInto,
  flipFirstChar,
  localStoreForEachTest,
} from "../../../tests/support/storage-helpers";
import { makeStorageKey } from "./storage.server";

describe("local storage", () => {
  const world = localStoreForEachTest();
  const owner = "owner-1";

  describe("signed upload through the resource route", () => {
    it("stores the streamed bytes with the signed content type", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".wav" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/wav" });
      expect(upload.method).toBe("PUT");
      expect(upload.headers).toEqual({ "Content-Type": "audio/wav" });
      const url = new URL(upload.url);
      expect(url.origin + url.pathname).toBe(`${BASE_URL}/resources/storage/${key}`);
      expect(url.searchParams.get("m")).toBe("PUT");
      expect(url.searchParams.get("ct")).toBe("audio/wav");
      const exp = Number(url.searchParams.get("exp"));
      const now = Math.floor(Date.now() / 1000);
      expect(exp).toBeGreaterThanOrEqual(now + 15 * 60 - 2);
      expect(exp).toBeLessThanOrEqual(now + 15 * 60);

      const bytes = bytesOf(4000);
      const { stream } = countingStream(splitInto(bytes, 333));
      const response = await putThroughRoute(upload.url, stream, upload.headers);

      expect(response.status).toBe(200);
      expect(await response.text()).toBe("");
      expect(response.headers.get("ETag")).toBe(md5Etag(bytes));
      expect(await world.storage.head(key)).toEqual({ size: 4000, contentType: "audio/wav", etag: md5Etag(bytes) });
      expect((await readAll((await world.storage.getStream(key))!)).equals(bytes)).toBe(true);
      expect(await world.leftoverTempFiles()).toEqual([]);
    });

    it("accepts the URL until it expires and refuses it afterwards", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      const start = new Date("2030-01-01T10:00:00Z");
      vi.setSystemTime(start);
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });

      vi.setSystemTime(new Date(start.getTime() + 15 * 60 * 1000 + 1000));
      const late = await putThroughRoute(upload.url, Buffer.from("late"), upload.headers);
      expect(late.status).toBe(403);
      expect(await detailOf(late)).toBe("Signed URL has expired");
      expect(await world.storage.head(key)).toBeNull();

      vi.setSystemTime(new Date(start.getTime() + 15 * 60 * 1000));
      const lastSecond = await putThroughRoute(upload.url, Buffer.from("in time"), upload.headers);
      expect(lastSecond.status).toBe(200);
      expect(await world.storage.head(key)).toMatchObject({ size: 7 });
    });

    it("refuses a URL created with a negative expiry", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg", expiresInSeconds: -1 });
      const response = await putThroughRoute(upload.url, Buffer.from("x"), upload.headers);
      expect(response.status).toBe(403);
      expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
      expect(await world.storage.head(key)).toBeNull();
    });

    it.each([
      ["signature", (url: URL) => url.searchParams.set("sig", flipFirstChar(url.searchParams.get("sig")!))],
      ["expiry", (url: URL) => url.searchParams.set("exp", String(Number(url.searchParams.get("exp")) + 3600))],
      ["content type", (url: URL) => url.searchParams.set("ct", "text/html")],
      ["method", (url: URL) => url.searchParams.set("m", "GET")],
      ["missing signature", (url: URL) => url.searchParams.delete("sig")],
      ["key", (url: URL) => (url.pathname = url.pathname.replace(/\.mp3$/, ".wav"))],
    ] as const)("refuses a tampered %s with 403", async (_label, tamper) => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });
      const url = new URL(upload.url);
      tamper(url);
      const contentType = url.searchParams.get("ct") ?? "audio/mpeg";
      const response = await putThroughRoute(url.toString(), Buffer.from("x"), {
        "Content-Type": contentType,
      });
      expect(response.status).toBe(403);
      expect(await detailOf(response)).toBe("Invalid or expired signature");
      expect(await world.storage.head(key)).toBeNull();
      expect(await world.storage.head(key.replace(/\.mp3$/, ".wav"))).toBeNull();
    });

    it("refuses a Content-Type other than the signed one", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });
      for (const contentType of ["text/html", "audio/mpeg; charset=utf-8", "AUDIO/MPEG"]) {
        const response = await putThroughRoute(upload.url, Buffer.from("x"), { "Content-Type": contentType });
        expect(response.status).toBe(403);
        expect(await detailOf(response)).toBe("Content-Type does not match the signed upload URL");
      }
      const without = await action({
        request: new Request(upload.url, { method: "PUT", body: "x" }),
        params: routeParams(upload.url),
        context: {},
      });
      expect(without.status).toBe(403);
      expect(await world.storage.head(key)).toBeNull();
    });

    it("stops reading a streamed body past maxUploadBytes, answers 413 and leaves nothing behind", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });
      const chunks = splitInto(bytesOf(100 * 1024), 1024);
      const { stream, pulled } = countingStream(chunks);

      const response = await putThroughRoute(upload.url, stream, upload.headers);

      expect(response.status).toBe(413);
      expect(await detailOf(response)).toBe("Upload too large");
      // 4 KiB allowed: the fifth 1 KiB chunk trips the limit; a few more may sit in stream buffers.
      expect(pulled()).toBeGreaterThanOrEqual(5);
      expect(pulled()).toBeLessThan(20);
      expect(await world.storage.head(key)).toBeNull();
      expect(await world.leftoverTempFiles()).toEqual([]);
    });

    it("accepts exactly maxUploadBytes", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });
      const { stream } = countingStream(splitInto(bytesOf(4096), 1000));
      const response = await putThroughRoute(upload.url, stream, upload.headers);
      expect(response.status).toBe(200);
      expect(await world.storage.head(key)).toMatchObject({ size: 4096 });
    });

    it("answers 413 from a declared Content-Length without reading the body", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });
      const { stream, pulled } = countingStream(splitInto(bytesOf(8192), 1024));
      const response = await putThroughRoute(upload.url, stream, {
        ...upload.headers,
        "Content-Length": "8192",
      });
      expect(response.status).toBe(413);
      expect(pulled()).toBeLessThanOrEqual(1);
      expect(await world.storage.head(key)).toBeNull();
    });

    it("refuses methods other than PUT", async () => {
      const key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });
      const response = await action({
        request: new Request(upload.url, { method: "POST", body: "x", headers: upload.headers }),
        params: routeParams(upload.url),
        context: {},
      });
      expect(response.status).toBe(405);
      expect(await world.storage.head(key)).toBeNull();
    });
  });
});
