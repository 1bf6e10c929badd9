import { describe, expect, it } from "vitest";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { getDb } from "~/models/db.server";
import { getStorage } from "~/services/storage/storage.server";
import { runTranscriptionJob } from "~/services/transcription/job.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { putTo } from "../support/bad-file-doors";
import { wrongMagicFiles } from "../support/bad-file-fixtures";
import { call, jobOf, setupTranscriptionWorld, SPEECHMATICS_ENV } from "../support/transcription-world";
import { setupTestApp } from "../setup/app";

// POST /api/transcribe_v2 straight after the presigned PUT, without update-file-metadata first (issue 22, finding 3):
// the upload check runs there too, so the user's own recording is transcribed, a file the check refuses gets the
// message update-file-metadata would give, and a slot whose object never arrived is "not uploaded yet" — never a 404
// for one's own recording. Another user's key stays a 404.
const app = setupTestApp({ provider: true, env: SPEECHMATICS_ENV });
const { speechmatics, engine, upload } = setupTranscriptionWorld();

async function slotFor(client: ApiClient, file: { name: string; type: string }) {
  const slot = await call(uploadUrlAction, client, "/api/get-upload-url", {
    file_name: file.name,
    file_type: file.type,
    language_code: "de",
  });
  expect(slot.status).toBe(200);
  return slot.body as { key: string; url: string };
}

async function rowOf(key: string) {
  return getDb()
    .selectFrom("recordings")
    .where("storage_key", "=", key)
    .select(["upload_status", "duration_seconds", "transcription_status"])
    .executeTakeFirst();
}

describe("transcribe_v2 straight after the upload", () => {
  it("checks the upload itself and starts the transcription of the user's own recording", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(anna, { confirm: false });
    expect(await rowOf(key)).toMatchObject({ upload_status: "awaiting_upload" });
    const created = speechmatics().calls("create");

    const started = await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: key });
    expect(started.status).toBe(200);
    expect(started.body.job_name).toMatch(/^transcribe-[0-9a-f-]{36}$/);
    // The same check as update-file-metadata: probed, its duration known, ready.
    expect(await rowOf(key)).toMatchObject({ upload_status: "ready", transcription_status: "processing" });
    expect(Number((await rowOf(key))!.duration_seconds)).toBeGreaterThan(1);

    expect(await runTranscriptionJob((await jobOf(key)).id)).toBe("completed");
    expect(speechmatics().calls("create")).toBe(created + 1);
    // update-file-metadata afterwards (an older client's order) finds it ready and changes nothing.
    expect((await call(metadataAction, anna, "/api/update-file-metadata", { s3_key: key, metadata: {} })).status).toBe(
      200,
    );
  });

  it("refuses a file the upload check refuses with update-file-metadata's message, and keeps nothing of it", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const pdf = wrongMagicFiles().find((f) => f.label === "PDF")!;
    const message = `File type "application/pdf" is not supported. Please upload only MP3, or WAV files.`;
    const created = speechmatics().calls("create");

    // What update-file-metadata answers for these bytes …
    const viaMetadata = await slotFor(anna, pdf);
    expect((await putTo(viaMetadata.url, pdf.bytes, pdf.type)).status).toBe(200);
    const confirmed = await call(metadataAction, anna, "/api/update-file-metadata", {
      s3_key: viaMetadata.key,
      metadata: {},
    });
    expect({ status: confirmed.status, detail: confirmed.body.detail }).toEqual({ status: 400, detail: message });

    // … transcribe_v2 answers too, and the slot and its object are gone.
    const slot = await slotFor(anna, pdf);
    expect((await putTo(slot.url, pdf.bytes, pdf.type)).status).toBe(200);
    const refused = await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: slot.key });
    expect({ status: refused.status, detail: refused.body.detail }).toEqual({ status: 400, detail: message });
    expect(await rowOf(slot.key)).toBeUndefined();
    expect(await getStorage().head(slot.key)).toBeNull();
    expect(speechmatics().calls("create")).toBe(created);
  });

  it("says a slot whose object never arrived is not uploaded yet, and another user's key is not found", async () => {
    engine();
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const jonas = await apiClientFor(app.issuer, "jonas-keller");
    const created = speechmatics().calls("create");

    const slot = await slotFor(anna, { name: "Sprechstunde.wav", type: "audio/wav" });
    const early = await call(transcribeAction, anna, "/api/transcribe_v2", { s3_key: slot.key });
    expect({ status: early.status, detail: early.body.detail }).toEqual({
      status: 400,
      detail: "The audio file has not been uploaded yet",
    });
    // The slot stays for the PUT still to come.
    expect(await rowOf(slot.key)).toMatchObject({ upload_status: "awaiting_upload" });

    // Another user's key, uploaded and not yet checked, or checked: 404 as for a key that does not exist.
    const unchecked = await upload(anna, { confirm: false });
    const checked = await upload(anna);
    for (const key of [unchecked, checked, slot.key]) {
      const foreign = await call(transcribeAction, jonas, "/api/transcribe_v2", { s3_key: key });
      expect({ status: foreign.status, detail: foreign.body.detail }).toEqual({
        status: 404,
        detail: "Recording not found",
      });
    }
    // Jonas's attempt checked nothing of Anna's.
    expect(await rowOf(unchecked)).toMatchObject({ upload_status: "awaiting_upload" });
    expect(speechmatics().calls("create")).toBe(created);
  });
});
