import fs from "node:fs";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { action as abortAction } from "~/routes/api.upload-parts.abort";
import { action as completeAction } from "~/routes/api.upload-parts.complete";
import { action as startAction } from "~/routes/api.upload-parts.start";
import { action as statusAction } from "~/routes/api.upload-parts.status";
import { action as urlsAction } from "~/routes/api.upload-parts.urls";
import { action as storagePut } from "~/routes/resources.storage.$";
import { getDb } from "~/models/db.server";
import { runExpireSessions } from "~/services/jobs/registry.server";
import { getStorage } from "~/services/storage/storage.server";
import { makeFake, makeTempDir, makeTone, removeTempDir } from "../support/audio-fixtures";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { callRoute, setupTestApp } from "../setup/app";

// Resumable uploads (README "Resumable uploads"): the contract as an API client sees it, against the
// local store (through the app's storage route) and S3 (s3rver with ListParts and Abort).
export function multipartSuite(storage: "local" | "s3") {
  const app = setupTestApp({ provider: true, storage });
  const MiB = 1024 * 1024;
  let dir: string;
  let tone: Buffer;

  beforeAll(async () => {
    dir = await makeTempDir();
    // 130 s of 44.1 kHz 16-bit mono: about 11 MiB, so three parts of 5, 5 and about 1 MiB.
    tone = fs.readFileSync(await makeTone(dir, 130, "wav"));
  }, 60_000);
  afterAll(async () => {
    await removeTempDir(dir);
  });

  const as = (accountId: string) => apiClientFor(app.issuer, accountId);

  async function call(route: Parameters<typeof callRoute>[0], client: ApiClient, path: string, json: unknown) {
    const response = await callRoute(route, client(path, { method: "POST", json }));
    return { status: response.status, body: await response.json() };
  }

  async function start(client: ApiClient, bytes: Buffer, extra: Record<string, unknown> = {}) {
    return call(startAction, client, "/api/upload-parts/start", {
      file_name: "Sprechstunde Müller.wav",
      file_type: "audio/wav",
      file_size: bytes.length,
      language_code: "de",
      ...extra,
    });
  }

  /** PUT one part as a browser would: the app's route for the local store, S3 over HTTP. */
  async function putPart(url: string, bytes: Buffer) {
    const parsed = new URL(url);
    if (!parsed.pathname.startsWith("/resources/storage/")) {
      return fetch(url, { method: "PUT", body: new Uint8Array(bytes) });
    }
    const key = parsed.pathname.replace(/^\/resources\/storage\//, "");
    return callRoute(storagePut, new Request(url, { method: "PUT", body: new Uint8Array(bytes) }), { "*": key });
  }

  function slice(bytes: Buffer, partSize: number, n: number) {
    return bytes.subarray((n - 1) * partSize, n * partSize);
  }

  async function urlsFor(client: ApiClient, key: string, partNumbers: unknown) {
    return call(urlsAction, client, "/api/upload-parts/urls", { key, part_numbers: partNumbers });
  }

  describe(`resumable uploads (${storage} storage)`, () => {
    it("uploads in parts, resumes after an interruption from the parts the store holds, and lists the file", async () => {
      const anna = await as("anna-berger");
      const started = await start(anna, tone, { additional_context: "Vorbefund: Vorhofflimmern" });
      expect(started.status).toBe(200);
      expect(Object.keys(started.body).sort()).toEqual([
        "context_uploaded",
        "key",
        "part_count",
        "part_size",
        "record_id",
        "upload_id",
      ]);
      const { key, part_size: partSize, part_count: partCount } = started.body;
      expect(key).toMatch(/^audio\/[0-9a-f-]{36}\/\d{8}-\d{6}-[0-9a-f-]+\.wav$/);
      expect(partSize).toBe(5 * MiB);
      expect(partCount).toBe(3);
      expect(started.body.context_uploaded).toBe(true);

      const urls = await urlsFor(anna, key, [1, 2, 3]);
      expect(urls.status).toBe(200);
      expect(urls.body.parts.map((p: { part_number: number }) => p.part_number)).toEqual([1, 2, 3]);
      const url = (n: number) => urls.body.parts[n - 1].url as string;

      // The link drops after parts 1 and 3: part 2 never arrived.
      expect((await putPart(url(1), slice(tone, partSize, 1))).status).toBe(200);
      expect((await putPart(url(3), slice(tone, partSize, 3))).status).toBe(200);
      const status = await call(statusAction, anna, "/api/upload-parts/status", { key });
      expect(status.body).toMatchObject({ part_size: partSize, part_count: 3, file_size: tone.length });
      expect(status.body.parts).toEqual([
        { part_number: 1, size: partSize },
        { part_number: 3, size: tone.length - 2 * partSize },
      ]);
      const early = await call(completeAction, anna, "/api/upload-parts/complete", { key });
      expect(early).toEqual({ status: 400, body: { detail: "Parts still missing: 2" } });
      // The file is not listed while parts are missing.
      expect((await (await callRoute(filesLoader, anna("/api/files"))).json()).files).toEqual([]);

      // Resume: only part 2 is sent (a fresh URL), and a part sent twice replaces the first copy.
      const again = await urlsFor(anna, key, [2]);
      expect((await putPart(again.body.parts[0].url, slice(tone, partSize, 2))).status).toBe(200);
      expect((await putPart(url(1), slice(tone, partSize, 1))).status).toBe(200);
      expect(await call(completeAction, anna, "/api/upload-parts/complete", { key })).toEqual({
        status: 200,
        body: { success: true, key },
      });
      // A retried completion whose answer was lost succeeds again.
      expect((await call(completeAction, anna, "/api/upload-parts/complete", { key })).status).toBe(200);

      const confirmed = await call(metadataAction, anna, "/api/update-file-metadata", {
        s3_key: key,
        metadata: { template_id: "entlassbrief" },
      });
      expect(confirmed).toEqual({ status: 200, body: { success: true, key } });
      const stored = await getStorage().getStream(key);
      const hash = createHash("sha256");
      for await (const chunk of stored!) hash.update(chunk as Buffer);
      expect(hash.digest("hex")).toBe(createHash("sha256").update(tone).digest("hex"));
      const { files } = await (await callRoute(filesLoader, anna("/api/files"))).json();
      expect(files).toHaveLength(1);
      expect(files[0]).toMatchObject({ key, filename: "Sprechstunde Müller.wav" });
      const row = await getDb()
        .selectFrom("recordings")
        .where("storage_key", "=", key)
        .select(["size_bytes", "multipart_upload_id"])
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ size_bytes: String(tone.length), multipart_upload_id: null });
      // Done uploads take no more parts.
      expect(await urlsFor(anna, key, [1])).toEqual({
        status: 409,
        body: { detail: "There is no unfinished upload for this file" },
      });
    });

    it("refuses bad sizes, part numbers and a part of the wrong size", async () => {
      const anna = await as("anna-berger");
      expect((await start(anna, tone, { file_size: 73_400_321 })).body).toEqual({
        detail: "File is too large (70.1 MB). Maximum size is 70 MB.",
      });
      expect((await start(anna, tone, { file_size: 0 })).body).toEqual({ detail: "Invalid audio data: Empty file" });
      expect((await start(anna, tone, { file_size: "12" })).body).toEqual({ detail: "The file size is required" });
      expect((await start(anna, tone, { file_type: "text/html" })).body).toEqual({
        detail: "Unsupported file type: text/html. Please upload MP3 or WAV files.",
      });

      const { key, part_size: partSize } = (await start(anna, tone)).body;
      for (const numbers of [[0], [4], [1.5], [], "1", Array.from({ length: 21 }, () => 1)]) {
        expect(await urlsFor(anna, key, numbers)).toEqual({
          status: 400,
          body: { detail: "Give between 1 and 20 part numbers of this upload" },
        });
      }
      const urls = (await urlsFor(anna, key, [1, 2, 3])).body.parts;
      // Part 1 cut short: not counted as held, so the client sends it again.
      await putPart(urls[0].url, slice(tone, partSize, 1).subarray(0, MiB));
      await putPart(urls[1].url, slice(tone, partSize, 2));
      await putPart(urls[2].url, slice(tone, partSize, 3));
      const status = await call(statusAction, anna, "/api/upload-parts/status", { key });
      expect(status.body.parts.map((p: { part_number: number }) => p.part_number)).toEqual([2, 3]);
      expect((await call(completeAction, anna, "/api/upload-parts/complete", { key })).body).toEqual({
        detail: "Parts still missing: 1",
      });
    });

    // The embedded store's own signatures (S3 signs its part URLs itself).
    if (storage === "local")
      it("a part URL writes only its own part of its own upload", async () => {
        const anna = await as("anna-berger");
        const { key, upload_id: uploadId } = (await start(anna, tone)).body;
        const url = new URL((await urlsFor(anna, key, [1])).body.parts[0].url);
        const variants = [
          (u: URL) => u.searchParams.set("partNumber", "2"),
          (u: URL) => u.searchParams.set("uploadId", "0f6b1c1e-0000-4000-8000-000000000000"),
          // Without its part fields the URL is not a whole-object upload URL either.
          (u: URL) => (u.searchParams.delete("uploadId"), u.searchParams.delete("partNumber")),
        ];
        for (const change of variants) {
          const tampered = new URL(url);
          change(tampered);
          expect((await putPart(tampered.toString(), Buffer.alloc(16))).status).toBe(403);
        }
        expect(await getStorage().listParts({ key, uploadId })).toEqual([]);
        expect(await getStorage().head(key)).toBeNull();
      });

    it("checks the joined bytes like any upload: a PDF sent in parts is rejected and deleted", async () => {
      const anna = await as("anna-berger");
      const pdf = Buffer.concat([fs.readFileSync(await makeFake(dir, "pdf", "fake.wav")), Buffer.alloc(6 * MiB)]);
      const { key, part_size: partSize } = (await start(anna, pdf)).body;
      const urls = (await urlsFor(anna, key, [1, 2])).body.parts;
      await putPart(urls[0].url, slice(pdf, partSize, 1));
      await putPart(urls[1].url, slice(pdf, partSize, 2));
      expect((await call(completeAction, anna, "/api/upload-parts/complete", { key })).status).toBe(200);
      const confirmed = await call(metadataAction, anna, "/api/update-file-metadata", { s3_key: key, metadata: {} });
      expect(confirmed.status).toBe(400);
      expect(confirmed.body.detail).toMatch(/not supported/);
      expect(await getStorage().head(key)).toBeNull();
    });

    it("abort and the daily sweep leave no parts and no slot; another user's key is a 404", async () => {
      const anna = await as("anna-berger");
      const jonas = await as("jonas-keller");
      const { key, upload_id: uploadId, part_size: partSize } = (await start(anna, tone)).body;
      const urls = (await urlsFor(anna, key, [1])).body.parts;
      await putPart(urls[0].url, slice(tone, partSize, 1));

      for (const [route, path, json] of [
        [urlsAction, "/api/upload-parts/urls", { key, part_numbers: [1] }],
        [statusAction, "/api/upload-parts/status", { key }],
        [completeAction, "/api/upload-parts/complete", { key }],
        [abortAction, "/api/upload-parts/abort", { key }],
      ] as const) {
        expect(await call(route, jonas, path, json)).toEqual({ status: 404, body: { detail: "Recording not found" } });
      }
      expect(await getStorage().listParts({ key, uploadId })).toHaveLength(1);

      expect(await call(abortAction, anna, "/api/upload-parts/abort", { key })).toEqual({
        status: 200,
        body: { success: true },
      });
      expect(await getStorage().listParts({ key, uploadId })).toBeNull();
      expect(
        await getDb().selectFrom("recordings").where("storage_key", "=", key).select("id").executeTakeFirst(),
      ).toBeUndefined();

      // An upload abandoned mid-way is swept with its parts after a day.
      const left = (await start(anna, tone)).body;
      await putPart((await urlsFor(anna, left.key, [2])).body.parts[0].url, slice(tone, partSize, 2));
      await runExpireSessions(new Date(Date.now() + 25 * 3_600_000));
      expect(await getStorage().listParts({ key: left.key, uploadId: left.upload_id })).toBeNull();
      expect(
        await getDb().selectFrom("recordings").where("storage_key", "=", left.key).select("id").executeTakeFirst(),
      ).toBeUndefined();
    });
  });
}
