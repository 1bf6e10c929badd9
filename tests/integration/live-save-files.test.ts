import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action as deleteAllAction } from "~/routes/api.delete-all";
import { loader as filesLoader } from "~/routes/api.files";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { getDb } from "~/models/db.server";
import { runExpireSessions } from "~/services/jobs/registry.server";
import { saveRealtimeTranscript } from "~/services/live/save.server";
import { getStorage } from "~/services/storage/storage.server";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { userIdOf } from "../support/letter-fixtures";
import {
  livePayload,
  liveSlot,
  makeRecorderWebm,
  makeTonePcm,
  pcmSource,
  playedAudio,
  putUpload,
  recordingOf,
  saveLive,
} from "../support/live-save";
import { callRoute, setupTestApp } from "../setup/app";

// A saved live recording among the other recordings (issue 7): the files list with SPEC §3's live metadata,
// playback in its own container's type, deletion with the browser's staged copy, and the daily sweep of
// unfinished uploads, which must leave a live recording waiting for its audio (and its transcript) alone.
const app = setupTestApp({ provider: true });
let dir: string;
let pcm: Buffer;
let wav: string;

beforeAll(async () => {
  dir = await makeTempDir();
  pcm = await makeTonePcm(2);
  wav = await makeSpeechWav(dir);
});
afterAll(async () => {
  await removeTempDir(dir);
});

function as(accountId: string) {
  return apiClientFor(app.issuer, accountId);
}

/** The account's id, as the live session store has it (a first API call creates the account). */
async function idOf(accountId: string) {
  await callRoute(filesLoader, (await as(accountId))("/api/files"));
  return userIdOf(accountId);
}

/** get-upload-url for a WAV; with `bytes`, also the PUT and update-file-metadata, as the browser uploads. */
async function uploadWav(client: ApiClient, bytes?: Buffer) {
  const json = { file_name: "upload.wav", file_type: "audio/wav", language_code: "de" };
  const slot = await (await callRoute(uploadUrlAction, client("/api/get-upload-url", { method: "POST", json }))).json();
  if (bytes) {
    expect((await putUpload(slot.url, bytes, "audio/wav")).status).toBe(200);
    const confirm = client("/api/update-file-metadata", { method: "POST", json: { s3_key: slot.key, metadata: {} } });
    expect((await callRoute(metadataAction, confirm)).status).toBe(200);
  }
  return slot.key as string;
}

const LIVE_FIELDS = ["created_via", "source_type", "is_realtime", "original_mime_type", "transcription_status"];

describe("a saved live recording among the user's files", () => {
  it("is listed by GET /api/files with the live metadata; an upload's record is unchanged", async () => {
    const anna = await as("anna-berger");
    const userId = await idOf("anna-berger");
    const saved = await saveRealtimeTranscript({
      userId,
      payload: livePayload({ display_name: "Visite" }),
      pcmAudio: pcmSource(pcm),
    });
    const uploaded = await uploadWav(anna, fs.readFileSync(wav));
    const { files } = await (await callRoute(filesLoader, anna("/api/files"))).json();
    const live = files.find((f: { key: string }) => f.key === saved.audio_key);
    expect(Object.keys(live).sort()).toEqual(["filename", "key", "metadata", "transcriptionStatus", "uploadDate"]);
    expect(live).toMatchObject({ filename: "live", transcriptionStatus: "completed" });
    expect(live.metadata).toMatchObject({
      created_via: "realtime",
      source_type: "realtime_recording",
      transcription_status: "completed",
      is_realtime: "true",
      original_mime_type: "audio/webm;codecs=opus",
      transcript_key: saved.transcript_key,
      language_code: "de-DE",
      template_id: "entlassbrief",
      tags: ["Kardio"],
      display_name: "Visite",
      source_key: saved.audio_key,
      transcription_mode: "transcript",
    });
    expect(live.metadata.duration).toBeCloseTo(2, 1);
    const upload = files.find((f: { key: string }) => f.key === uploaded);
    for (const field of [...LIVE_FIELDS, "duration"]) expect(upload.metadata).not.toHaveProperty(field);
  });

  it("plays with its container's Content-Type: WebM as audio/webm, M4A as audio/mp4; an upload's WAV as audio/wav", async () => {
    const anna = await as("anna-berger");
    const userId = await idOf("anna-berger");
    for (const [recorder, contentType, codec] of [
      ["audio/webm;codecs=opus", "audio/webm", "opus"],
      ["audio/mp4", "audio/mp4", "aac"],
    ]) {
      const saved = await saveRealtimeTranscript({
        userId,
        payload: livePayload({ display_name: `Ton ${recorder}`, original_mime_type: recorder }),
        pcmAudio: pcmSource(pcm),
      });
      expect(await playedAudio(anna, saved.audio_key, dir)).toMatchObject({ contentType, codec });
    }
    const uploaded = await uploadWav(anna, fs.readFileSync(wav));
    expect(await playedAudio(anna, uploaded, dir)).toMatchObject({ contentType: "audio/wav", codec: "pcm_s16le" });
  });

  it("takes the browser's staged, unconfirmed copy with it when deleted", async () => {
    const anna = await as("anna-berger");
    const userId = await idOf("anna-berger");
    const saved = await saveRealtimeTranscript({
      userId,
      payload: livePayload({ display_name: "Zu löschen" }),
      pcmAudio: pcmSource(pcm),
    });
    const row = await recordingOf(saved.audio_key);
    const slot = await (await liveSlot(anna, saved.audio_key)).json();
    const recorded = fs.readFileSync(await makeRecorderWebm(dir));
    expect((await putUpload(slot.url, recorded, "audio/webm;codecs=opus")).status).toBe(200);
    const staging = `${saved.audio_key}.upload`;
    expect(await getStorage().head(staging)).not.toBeNull();

    const answer = await callRoute(
      deleteAllAction,
      anna("/api/delete-all", { method: "POST", json: { s3_key: saved.audio_key } }),
    );
    expect(answer.status).toBe(200);
    for (const key of [staging, saved.audio_key, saved.transcript_key!])
      expect(await getStorage().head(key)).toBeNull();
    expect(await getDb().selectFrom("recordings").where("id", "=", row.id).select("id").executeTakeFirst()).toBe(
      undefined,
    );
    const transcripts = await getDb()
      .selectFrom("transcripts")
      .where("recording_id", "=", row.id)
      .select("id")
      .execute();
    expect(transcripts).toEqual([]);
  });

  it("is kept by update-file-metadata and by the daily sweep while it waits for the browser's audio", async () => {
    const anna = await as("anna-berger");
    const waiting = await (await saveLive(anna, livePayload({ display_name: "Wartet" }))).json();
    const renamed = await callRoute(
      metadataAction,
      anna("/api/update-file-metadata", {
        method: "POST",
        json: { s3_key: waiting.audio_key, metadata: { display_name: "Wartet noch" } },
      }),
    );
    expect(renamed.status).toBe(200);
    const abandoned = await uploadWav(anna);

    const swept = await runExpireSessions(new Date(Date.now() + 25 * 3_600_000));
    expect(swept.uploads.slots).toBeGreaterThanOrEqual(1);
    const upload = await getDb().selectFrom("recordings").where("storage_key", "=", abandoned).select("id");
    expect(await upload.executeTakeFirst()).toBeUndefined();
    const row = await recordingOf(waiting.audio_key);
    expect(row).toMatchObject({
      upload_status: "awaiting_upload",
      display_name: "Wartet noch",
      created_via: "realtime",
    });
    expect(await getStorage().head(waiting.transcript_key)).not.toBeNull();
    const transcripts = await getDb()
      .selectFrom("transcripts")
      .where("recording_id", "=", row.id)
      .select("id")
      .execute();
    expect(transcripts).toHaveLength(1);
  });
});
