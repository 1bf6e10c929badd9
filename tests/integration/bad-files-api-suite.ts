import fs from "node:fs";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loader as playbackLoader } from "~/routes/api.audio-playback.$";
import { loader as filesLoader } from "~/routes/api.files";
import { getDb } from "~/models/db.server";
import { getStorage } from "~/services/storage/storage.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { makeTempDir, makeTone, removeTempDir } from "../support/audio-fixtures";
import { multipartUpload, presignedUpload, storedState } from "../support/bad-file-doors";
import {
  brokenHeaderFiles,
  brokenHeaderType,
  serverKeyPattern,
  wavBomb,
  wrongMagicFiles,
  WRONG_MAGIC_TYPES,
  xingBomb,
  type BadFile,
} from "../support/bad-file-fixtures";
import { userIdOf } from "../support/letter-fixtures";
import { callRoute, setupTestApp } from "../setup/app";

// Hostile files through the JSON API's two upload doors — get-upload-url + PUT + update-file-metadata, and the
// resumable upload (start, parts, complete, update-file-metadata) — against the local store and S3. Each refusal
// carries the SPEC message as `detail` and leaves neither a row nor an object of the user's.
export function badFilesApiSuite(storage: "local" | "s3") {
  const app = setupTestApp({ provider: true, storage });
  const unsupported = (type: string) => `File type "${type}" is not supported. Please upload only MP3, or WAV files.`;
  const doors = { presigned: presignedUpload, multipart: multipartUpload } as const;
  let dir: string;
  let anna: ApiClient;
  let annaId: string;

  beforeAll(async () => {
    dir = await makeTempDir("skribent-bad-api-");
    anna = await apiClientFor(app.issuer, "anna-berger");
    await callRoute(filesLoader, anna("/api/files")); // the first call creates the account
    annaId = await userIdOf("anna-berger");
  });
  afterAll(async () => {
    await removeTempDir(dir);
  });

  async function expectRefused(door: keyof typeof doors, file: BadFile, status: number, message: string) {
    const before = await storedState(annaId);
    const outcome = await doors[door](anna, file);
    expect({ status: outcome.status, message: outcome.message }).toEqual({ status, message });
    expect(await storedState(annaId)).toEqual(before);
    return outcome;
  }

  describe(`bad files through the API (${storage} storage)`, () => {
    describe.each(["presigned", "multipart"] as const)("%s upload", (door) => {
      it.each(wrongMagicFiles())("a $label file named $name is refused by its magic bytes", async (file) => {
        await expectRefused(door, file, 400, unsupported(WRONG_MAGIC_TYPES[file.label]!));
      });

      it.each(brokenHeaderFiles())("a broken header is refused: $label", async (file) => {
        await expectRefused(door, file, 400, unsupported(brokenHeaderType(file)));
      });

      it("an MP3 whose Xing header claims 50 million frames is too long", async () => {
        const message = "Recording is too long (362:48:42). Maximum length is 4:00:00.";
        await expectRefused(door, await xingBomb(dir), 400, message);
      });

      it("zero bytes", async () => {
        const empty = { label: "empty", name: "leer.wav", type: "audio/wav", bytes: Buffer.alloc(0) };
        const outcome = await expectRefused(door, empty, 400, "Invalid audio data: Empty file");
        // The resumable door refuses the declared size before any slot exists.
        expect(outcome.step).toBe(door === "multipart" ? "start" : "confirm");
      });
    });

    it("a type outside audio/* is refused at the slot, whatever the bytes", async () => {
      const wav = fs.readFileSync(await makeTone(dir, 1, "wav"));
      const file = { label: "pdf-typed", name: "ton.wav", type: "application/pdf", bytes: wav };
      const message = "Unsupported file type: application/pdf. Please upload MP3 or WAV files.";
      expect((await expectRefused("presigned", file, 400, message)).step).toBe("slot");
      expect((await expectRefused("multipart", file, 400, message)).step).toBe("start");
    });

    it("73,400,321 bytes: the resumable door refuses the size; a single PUT never becomes a recording", async () => {
      const declared = { label: "big", name: "gross.wav", type: "audio/wav", bytes: Buffer.alloc(16) };
      const tooLarge = "File is too large (70.1 MB). Maximum size is 70 MB.";
      const started = await expectRefused(
        "multipart",
        { ...declared, declaredSize: 73_400_321 } as BadFile,
        400,
        tooLarge,
      );
      expect(started.step).toBe("start");

      const before = await storedState(annaId);
      const zeros = Readable.from(
        (function* () {
          for (let left = 73_400_321; left > 0; left -= 1 << 20) yield Buffer.alloc(Math.min(left, 1 << 20));
        })(),
      );
      const outcome = await presignedUpload(anna, { ...declared, bytes: zeros });
      if (storage === "local") {
        // The local store stops the PUT at the limit (the browser shows "Upload failed with status: 413"), and the
        // slot that can never be confirmed goes with it: no object, no row.
        expect(outcome).toMatchObject({ status: 413, step: "put" });
        expect(await getStorage().head(outcome.key!)).toBeNull();
        expect(await storedState(annaId)).toEqual(before);
      } else {
        // S3 cannot limit a presigned PUT: the server's check of the stored object refuses it and deletes both.
        expect(outcome).toMatchObject({ status: 400, message: tooLarge, step: "confirm" });
        expect(await storedState(annaId)).toEqual(before);
      }
    }, 120_000);

    it("a WAV whose data chunk claims 4 GiB is kept with its true length, under a key of the server's", async () => {
      const jonas = await apiClientFor(app.issuer, "jonas-keller");
      for (const door of ["presigned", "multipart"] as const) {
        const outcome = await doors[door](jonas, wavBomb());
        expect(outcome).toMatchObject({ status: 200 });
        const row = await getDb()
          .selectFrom("recordings")
          .where("storage_key", "=", outcome.key!)
          .select(["owner_id", "duration_seconds", "upload_status"])
          .executeTakeFirstOrThrow();
        expect(row).toMatchObject({ duration_seconds: 2, upload_status: "ready" });
        expect(outcome.key).toMatch(serverKeyPattern(row.owner_id));
      }
    });

    it("an MP3 sent as audio/wav is kept as what it is and plays as audio/mpeg", async () => {
      const mp3 = fs.readFileSync(await makeTone(dir, 2, "mp3"));
      const jonas = await apiClientFor(app.issuer, "jonas-keller");
      const outcome = await presignedUpload(jonas, { name: "falsch.wav", type: "audio/wav", bytes: mp3 });
      expect(outcome).toMatchObject({ status: 200 });
      const row = await getDb()
        .selectFrom("recordings")
        .where("storage_key", "=", outcome.key!)
        .select(["audio_format"])
        .executeTakeFirstOrThrow();
      expect(row.audio_format).toBe("mp3");
      const answer = await callRoute(playbackLoader, jonas(`/api/audio-playback/${outcome.key}`), {
        "*": outcome.key!,
      });
      const url = new URL((await answer.json()).playback_url);
      const type = url.searchParams.get("response-content-type") ?? url.searchParams.get("ct");
      expect(type).toBe("audio/mpeg");
    });
  });
}
