import { beforeEach, describe, expect, it } from "vitest";

import { loader } from "~/routes/resources.storage.$";

import {
  BASE_URL,
  bytesOf,
  detailOf,
  getThroughRoute,
  md5Etag,
  putThroughRoute,
  routeParams,
  localStoreForEachTest,
} from "../../../tests/support/storage-helpers";
import { createStorage, makeStorageKey, setStorage } from "./storage.server";

describe("local storage", () => {
  const world = localStoreForEachTest();
  const owner = "owner-1";

  describe("signed download through the resource route", () => {
    const bytes = bytesOf(1000, 3);
    let key: string;

    beforeEach(async () => {
      key = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      await world.storage.put({ key, body: bytes, contentType: "audio/mpeg" });
    });

    it("streams the whole object with the stored type", async () => {
      const url = await world.storage.createDownloadUrl({ key });
      const exp = Number(new URL(url).searchParams.get("exp"));
      expect(exp - Math.floor(Date.now() / 1000)).toBeGreaterThan(5 * 60 - 3);
      expect(exp - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(5 * 60);

      const response = await getThroughRoute(url);
      expect(response.status).toBe(200);
      expect(response.headers.get("Content-Type")).toBe("audio/mpeg");
      expect(response.headers.get("Content-Length")).toBe("1000");
      expect(response.headers.get("Accept-Ranges")).toBe("bytes");
      expect(response.headers.get("Cache-Control")).toBe("private, no-store");
      expect(response.headers.get("ETag")).toBe(md5Etag(bytes));
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    });

    it("serves a signed content-type override", async () => {
      const url = await world.storage.createDownloadUrl({ key, contentType: "application/octet-stream" });
      const response = await getThroughRoute(url);
      expect(response.headers.get("Content-Type")).toBe("application/octet-stream");
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    });

    it.each([
      ["bytes=100-199", 100, 199],
      ["bytes=990-", 990, 999],
      ["bytes=-7", 993, 999],
      ["bytes=0-0", 0, 0],
      ["bytes=500-5000", 500, 999],
    ] as const)("answers %s with 206 and exactly those bytes", async (range, start, end) => {
      const response = await getThroughRoute(await world.storage.createDownloadUrl({ key }), { Range: range });
      expect(response.status).toBe(206);
      expect(response.headers.get("Content-Range")).toBe(`bytes ${start}-${end}/1000`);
      expect(response.headers.get("Content-Length")).toBe(String(end - start + 1));
      expect(response.headers.get("Accept-Ranges")).toBe("bytes");
      expect(response.headers.get("Content-Type")).toBe("audio/mpeg");
      const body = Buffer.from(await response.arrayBuffer());
      expect(body.equals(bytes.subarray(start, end + 1))).toBe(true);
    });

    it("answers an unsatisfiable range with 416", async () => {
      const response = await getThroughRoute(await world.storage.createDownloadUrl({ key }), {
        Range: "bytes=1000-",
      });
      expect(response.status).toBe(416);
      expect(response.headers.get("Content-Range")).toBe("bytes */1000");
    });

    it("answers HEAD with the headers and no body", async () => {
      const url = await world.storage.createDownloadUrl({ key });
      const response = await loader({
        request: new Request(url, { method: "HEAD" }),
        params: routeParams(url),
        context: {},
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("Content-Length")).toBe("1000");
      expect(response.body).toBeNull();
    });

    it("refuses a request without a signature", async () => {
      const response = await getThroughRoute(`${BASE_URL}/resources/storage/${key}`);
      expect(response.status).toBe(403);
      expect(await detailOf(response)).toBe("Invalid or expired signature");
    });

    it("refuses an upload URL used for a download, and an expired download URL", async () => {
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });
      expect((await getThroughRoute(upload.url)).status).toBe(403);
      const expired = await world.storage.createDownloadUrl({ key, expiresInSeconds: -1 });
      const response = await getThroughRoute(expired);
      expect(response.status).toBe(403);
      expect(await detailOf(response)).toBe("Signed URL has expired");
    });

    it("answers 404 for a signed URL to a missing object", async () => {
      const missing = makeStorageKey({ ownerId: owner, area: "audio", extension: ".mp3" });
      const response = await getThroughRoute(await world.storage.createDownloadUrl({ key: missing }));
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ detail: "Not found" });
    });

    it("answers 404 for a malformed key in the path", async () => {
      const response = await loader({
        request: new Request(`${BASE_URL}/resources/storage/x`),
        params: { "*": "audio/owner-1/../../x" },
        context: {},
      });
      expect(response.status).toBe(404);
    });

    it("is not served when the configured world.storage is S3", async () => {
      const url = await world.storage.createDownloadUrl({ key });
      setStorage(createStorage({ kind: "s3", bucket: "b", region: "us-east-1", endpoint: "http://127.0.0.1:9" }));
      const get = await getThroughRoute(url);
      expect(get.status).toBe(404);
      expect(await get.json()).toEqual({ detail: "Not found" });
      const upload = await world.storage.createUploadUrl({ key, contentType: "audio/mpeg" });
      expect((await putThroughRoute(upload.url, Buffer.from("x"), upload.headers)).status).toBe(404);
    });
  });
});
