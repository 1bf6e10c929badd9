import fs from "node:fs";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { loader as playbackLoader } from "~/routes/api.audio-playback.$";
import { action as deleteAllAction } from "~/routes/api.delete-all";
import { loader as filesLoader } from "~/routes/api.files";
import { action as forceCleanupAction } from "~/routes/api.force-cleanup";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as renameAction } from "~/routes/api.rename-file";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { action as tagsAction } from "~/routes/api.update-file-tags";
import { action as storagePut, loader as storageGet } from "~/routes/resources.storage.$";
import { getDb } from "~/models/db.server";
import { runExpireSessions } from "~/services/jobs/registry.server";
import { getStorage } from "~/services/storage/storage.server";
import { makeFake, setupSpeechWav } from "../support/audio-fixtures";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { livePayload, recordingOf, saveLive } from "../support/live-save";
import { callRoute, setupTestApp } from "../setup/app";

// Contract tests for the recordings rows of SPEC §7, as an external client:
// bearer token, JSON, the exact answer fields — and the server's own checks.
export function recordingsApiSuite(storage: "local" | "s3") {
  const app = setupTestApp({ provider: true, storage });
  const speech = setupSpeechWav();

  function as(accountId: string) {
    return apiClientFor(app.issuer, accountId);
  }
  type Client = ApiClient;

  function* zeroChunks(total: number) {
    const chunk = Buffer.alloc(1024 * 1024);
    for (let left = total; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
  }

  /** PUT to the upload URL as a browser would: the app's route for the local store, S3 over HTTP. */
  async function putBytes(url: string, bytes: Buffer, contentType: string) {
    if (!new URL(url).pathname.startsWith("/resources/storage/"))
      return fetch(url, { method: "PUT", headers: { "Content-Type": contentType }, body: new Uint8Array(bytes) });
    const key = decodeURIComponent(new URL(url).pathname.replace(/^\/resources\/storage\//, ""));
    return callRoute(
      storagePut,
      new Request(url, { method: "PUT", headers: { "Content-Type": contentType }, body: new Uint8Array(bytes) }),
      { "*": key },
    );
  }

  /** A fresh upload slot for a WAV, as get-upload-url answers it. */
  async function requestSlot(client: Client, fileName: string) {
    const json = { file_name: fileName, file_type: "audio/wav", language_code: "de" };
    return (await callRoute(uploadUrlAction, client("/api/get-upload-url", { method: "POST", json }))).json();
  }

  /** get-upload-url → PUT the bytes → update-file-metadata, like the browser does. */
  async function upload(client: Client, file: string, type = "audio/wav", metadata: Record<string, unknown> = {}) {
    const slot = await callRoute(
      uploadUrlAction,
      client("/api/get-upload-url", {
        method: "POST",
        json: {
          file_name: "Gespräch Müller.wav",
          file_type: type,
          language_code: "de",
          additional_context: "Vorbefund: Hypertonie",
        },
      }),
    );
    const body = await slot.json();
    const put = await putBytes(body.url, fs.readFileSync(file), type);
    expect(put.status).toBe(200);
    const confirmed = await callRoute(
      metadataAction,
      client("/api/update-file-metadata", { method: "POST", json: { s3_key: body.key, metadata } }),
    );
    return { slot: body, confirmed };
  }

  describe(`recordings API (${storage} storage)`, () => {
    it("get-upload-url answers the SPEC fields and a server-made key; bad types and context are refused", async () => {
      const anna = await as("anna-berger");
      const response = await callRoute(
        uploadUrlAction,
        anna("/api/get-upload-url", {
          method: "POST",
          json: { file_name: "../../x.wav", file_type: "audio/wav", language_code: "de-DE" },
        }),
      );
      expect(response.status).toBe(200);
      const body = await response.json();
      expect(Object.keys(body).sort()).toEqual(["context_uploaded", "key", "record_id", "url"]);
      expect(body.key).toMatch(/^audio\/[0-9a-f-]{36}\/\d{8}-\d{6}-[0-9a-f-]+\.wav$/);
      expect(body.context_uploaded).toBe(false);

      const pdf = await callRoute(
        uploadUrlAction,
        anna("/api/get-upload-url", {
          method: "POST",
          json: { file_name: "a.pdf", file_type: "application/pdf", language_code: "de" },
        }),
      );
      expect(await pdf.json()).toEqual({
        detail: "Unsupported file type: application/pdf. Please upload MP3 or WAV files.",
      });
      const long = await callRoute(
        uploadUrlAction,
        anna("/api/get-upload-url", {
          method: "POST",
          json: {
            file_name: "a.wav",
            file_type: "audio/wav",
            language_code: "de",
            additional_context: "k".repeat(10_001),
          },
        }),
      );
      expect(long.status).toBe(400);
      // An unconfirmed slot is not a recording yet.
      const files = await (await callRoute(filesLoader, anna("/api/files"))).json();
      expect(files.files).toEqual([]);
    });

    it("uploads a real WAV, checks it on the server, and lists it with the SPEC §3 fields", async () => {
      const anna = await as("anna-berger");
      const { slot, confirmed } = await upload(anna, speech.wav(), "audio/wav", {
        template_id: "entlassbrief",
        tags: '["Kardio"]',
        transcription_mode: "transcript",
      });
      expect(slot.context_uploaded).toBe(true);
      expect(confirmed.status).toBe(200);
      const { files } = await (await callRoute(filesLoader, anna("/api/files"))).json();
      expect(files).toHaveLength(1);
      expect(Object.keys(files[0]).sort()).toEqual([
        "filename",
        "key",
        "metadata",
        "transcriptionStatus",
        "uploadDate",
      ]);
      expect(files[0]).toMatchObject({
        key: slot.key,
        filename: "Gespräch Müller.wav",
        transcriptionStatus: "pending",
      });
      expect(files[0].metadata).toMatchObject({
        template_id: "entlassbrief",
        tags: ["Kardio"],
        language_code: "de-DE",
        transcription_mode: "transcript",
      });
      const row = await getDb()
        .selectFrom("recordings")
        .where("storage_key", "=", slot.key)
        .select(["size_bytes", "duration_seconds", "audio_format"])
        .executeTakeFirstOrThrow();
      expect(Number(row.size_bytes)).toBe(fs.statSync(speech.wav()).size);
      expect(row.duration_seconds).toBeGreaterThan(1);
      expect(row.audio_format).toBe("wav");
      const context = await getDb().selectFrom("recording_context").select(["kind", "text"]).execute();
      expect(context).toEqual([{ kind: "text", text: "Vorbefund: Hypertonie" }]);
    });

    it("rejects a '.wav' that is really a PDF or HTML and deletes its object", async () => {
      const anna = await as("anna-berger");
      for (const kind of ["pdf", "html"] as const) {
        const fake = await makeFake(speech.dir(), kind, `fake-${kind}.wav`);
        const { slot, confirmed } = await upload(anna, fake, "audio/wav");
        expect(confirmed.status).toBe(400);
        expect((await confirmed.json()).detail).toMatch(/not supported|Unsupported file type/);
        expect(await getStorage().head(slot.key)).toBeNull();
        expect(
          await getDb().selectFrom("recordings").where("storage_key", "=", slot.key).select("id").executeTakeFirst(),
        ).toBeUndefined();
      }
    });

    it("removes upload slots never confirmed after a day, with their objects", async () => {
      const anna = await as("anna-berger");
      const slot = await requestSlot(anna, "x.wav");
      await putBytes(slot.url, fs.readFileSync(speech.wav()), "audio/wav");
      // Not an upload slot: a live recording waiting for the browser's audio, its transcript saved (issue 7).
      const live = await (await saveLive(anna, livePayload())).json();
      await runExpireSessions(new Date(Date.now() + 23 * 3_600_000));
      expect(await getStorage().head(slot.key)).not.toBeNull();
      const swept = await runExpireSessions(new Date(Date.now() + 25 * 3_600_000));
      expect(swept.uploads.slots).toBeGreaterThanOrEqual(1);
      expect(await getStorage().head(slot.key)).toBeNull();
      expect((await recordingOf(live.audio_key)).upload_status).toBe("awaiting_upload");
      expect(await getStorage().head(live.transcript_key)).not.toBeNull();
      expect(
        await getDb().selectFrom("recordings").where("storage_key", "=", slot.key).select("id").executeTakeFirst(),
      ).toBeUndefined();
    });

    it("rejects an object of 73,400,321 bytes by its stored size, before reading it", async () => {
      const anna = await as("anna-berger");
      const slot = await requestSlot(anna, "lang.wav");
      // As if a client had bypassed the upload URL's own limit (S3 cannot enforce one on a presigned PUT).
      await getStorage().put({ key: slot.key, body: Readable.from(zeroChunks(73_400_321)), contentType: "audio/wav" });
      const confirmed = await callRoute(
        metadataAction,
        anna("/api/update-file-metadata", { method: "POST", json: { s3_key: slot.key, metadata: {} } }),
      );
      expect(confirmed.status).toBe(400);
      expect(await confirmed.json()).toEqual({ detail: "File is too large (70.1 MB). Maximum size is 70 MB." });
      expect(await getStorage().head(slot.key)).toBeNull();
    });

    it("rename, tags, playback, reset and delete — and another user's key is a 404", async () => {
      const anna = await as("anna-berger");
      const jonas = await as("jonas-keller");
      const { slot } = await upload(anna, speech.wav());
      const key = slot.key as string;

      const rename = await callRoute(
        renameAction,
        anna("/api/rename-file", {
          method: "POST",
          json: { s3_key: key, display_name: "  Herr Müller – Kontrolle  " },
        }),
      );
      expect(await rename.json()).toEqual({ success: true, display_name: "Herr Müller – Kontrolle" });
      for (const [displayName, detail] of [
        ["  ", "Text cannot be empty"],
        ["n".repeat(101), "Text must be 100 characters or less"],
      ]) {
        const bad = await callRoute(
          renameAction,
          anna("/api/rename-file", { method: "POST", json: { s3_key: key, display_name: displayName } }),
        );
        expect(await bad.json()).toEqual({ detail });
      }
      const noKey = await callRoute(
        renameAction,
        anna("/api/rename-file", { method: "POST", json: { display_name: "x" } }),
      );
      expect(await noKey.json()).toEqual({ detail: "File key is required" });

      const tags = await callRoute(
        tagsAction,
        anna("/api/update-file-tags", {
          method: "POST",
          json: { s3_key: key, tags: ["Kardio", "kardio", "", 3, "Nachsorge"], update_all_related: true },
        }),
      );
      expect(await tags.json()).toEqual({ success: true, tags: ["Kardio", "Nachsorge"] });
      const six = await callRoute(
        tagsAction,
        anna("/api/update-file-tags", { method: "POST", json: { s3_key: key, tags: ["a", "b", "c", "d", "e", "f"] } }),
      );
      expect(six.status).toBe(400);
      const notArray = await callRoute(
        tagsAction,
        anna("/api/update-file-tags", { method: "POST", json: { s3_key: key, tags: { a: 1 } } }),
      );
      expect(await notArray.json()).toEqual({ detail: "Tags must be an array" });

      const play = await callRoute(playbackLoader, anna(`/api/audio-playback/${key}`), { "*": key });
      const { playback_url } = await play.json();
      expect(
        Object.keys(await (await callRoute(playbackLoader, anna(`/api/audio-playback/${key}`), { "*": key })).json()),
      ).toEqual(["playback_url"]);
      const ranged = new URL(playback_url).pathname.startsWith("/resources/storage/")
        ? await callRoute(storageGet, new Request(playback_url, { headers: { Range: "bytes=0-11" } }), { "*": key })
        : await fetch(playback_url, { headers: { Range: "bytes=0-11" } });
      expect(ranged.status).toBe(206);
      expect(Buffer.from(await ranged.arrayBuffer()).toString("latin1", 0, 4)).toBe("RIFF");

      // Another user: 404 everywhere, nothing changed.
      for (const call of [
        () =>
          callRoute(
            renameAction,
            jonas("/api/rename-file", { method: "POST", json: { s3_key: key, display_name: "x" } }),
          ),
        () =>
          callRoute(tagsAction, jonas("/api/update-file-tags", { method: "POST", json: { s3_key: key, tags: [] } })),
        () => callRoute(playbackLoader, jonas(`/api/audio-playback/${key}`), { "*": key }),
        () => callRoute(forceCleanupAction, jonas("/api/force-cleanup", { method: "POST", json: { s3_key: key } })),
        () => callRoute(deleteAllAction, jonas("/api/delete-all", { method: "POST", json: { s3_key: key } })),
        () =>
          callRoute(
            metadataAction,
            jonas("/api/update-file-metadata", {
              method: "POST",
              json: { s3_key: key, metadata: { display_name: "x" } },
            }),
          ),
      ]) {
        const response = await call();
        expect(response.status).toBe(404);
        expect(await response.json()).toEqual({ detail: "Recording not found" });
      }
      expect(await getStorage().head(key)).not.toBeNull();

      const reset = await callRoute(
        forceCleanupAction,
        anna("/api/force-cleanup", { method: "POST", json: { s3_key: key } }),
      );
      expect(await reset.json()).toEqual({
        cleanup_results: { medical_letters_deleted: 0, transcript_deleted: false, source_reset: true },
      });

      const deleted = await callRoute(
        deleteAllAction,
        anna("/api/delete-all", { method: "POST", json: { s3_key: key, transcript_key: null, arztbrief_key: null } }),
      );
      expect(await deleted.json()).toEqual({ success: true });
      expect(await getStorage().head(key)).toBeNull();
      const left = await getDb().selectFrom("recordings").where("storage_key", "=", key).select("id").execute();
      expect(left).toEqual([]);
      const contextLeft = await getDb()
        .selectFrom("recording_context")
        .innerJoin("recordings", "recordings.id", "recording_context.recording_id")
        .where("recordings.storage_key", "=", key)
        .select("recording_context.id")
        .execute();
      expect(contextLeft).toEqual([]);
    });
  });
}
