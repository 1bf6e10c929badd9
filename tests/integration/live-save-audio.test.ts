import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { saveRealtimeTranscript } from "~/services/live/save.server";
import { getStorage } from "~/services/storage/storage.server";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { apiClientFor } from "../support/api-client";
import { letterJobOf, userIdOf } from "../support/letter-fixtures";
import {
  confirmLive,
  livePayload,
  liveSlot,
  makeRecorderWebm,
  makeTonePcm,
  pcmSource,
  playedAudio,
  putUpload,
  recordingOf,
  run,
  saveLive,
} from "../support/live-save";
import { callRoute, setupTestApp } from "../setup/app";

// The audio of a saved live recording (issue 7): the server's copy made from the session's PCM, the browser's
// copy through get-upload-url with specific_key, a PUT and confirm-realtime-audio, and the letter that
// "transcript plus Arztbrief" starts once the recording has audio.
const app = setupTestApp({ provider: true });
let dir: string;
let webm: string;
let pcm: Buffer;

beforeAll(async () => {
  dir = await makeTempDir();
  webm = await makeRecorderWebm(dir);
  pcm = await makeTonePcm(2);
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

describe("the audio of a live recording", () => {
  it("plays the server's copy at once, then the browser's converted copy; a bad file keeps what was there", async () => {
    const anna = await as("anna-berger");
    const userId = await idOf("anna-berger");
    const saved = await saveRealtimeTranscript({
      userId,
      payload: livePayload({ display_name: "Mit Ton" }),
      pcmAudio: pcmSource(pcm),
    });
    const row = await recordingOf(saved.audio_key);
    expect(row).toMatchObject({ upload_status: "ready", audio_format: "webm", created_via: "realtime" });
    const server = await playedAudio(anna, saved.audio_key, dir);
    expect(server.codec).toBe("opus");
    expect(server.duration).toBeCloseTo(2, 1);

    const slot = await liveSlot(anna, saved.audio_key);
    expect(slot.status).toBe(200);
    const answer = await slot.json();
    expect(Object.keys(answer).sort()).toEqual(["context_uploaded", "key", "record_id", "url"]);
    expect(answer).toMatchObject({ key: saved.audio_key, record_id: row.id, context_uploaded: false });
    expect((await putUpload(answer.url, fs.readFileSync(webm), "audio/webm;codecs=opus")).status).toBe(200);
    // The upload never lands on the recording's audio before the server has checked it.
    expect((await playedAudio(anna, saved.audio_key, dir)).size).toBe(server.size);
    const confirmed = await confirmLive(anna, saved.audio_key);
    expect(confirmed.status).toBe(200);
    const browser = await playedAudio(anna, saved.audio_key, dir);
    expect(browser.codec).toBe("opus");
    // The recorder's file had no duration; the stored one has the speech's (espeak: ~5 s).
    const probe = await run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", webm]);
    expect(probe.stdout.trim()).toBe("N/A");
    expect(browser.duration).toBeGreaterThan(3);
    expect(browser.duration).toBeLessThan(10);
    expect((await recordingOf(saved.audio_key)).duration_seconds).toBeCloseTo(browser.duration, 2);

    const text = await (await liveSlot(anna, saved.audio_key, "audio/webm")).json();
    const bytes = Buffer.from("Das ist keine Aufnahme.\n".repeat(50));
    expect((await putUpload(text.url, bytes, "audio/webm")).status).toBe(200);
    const rejected = await confirmLive(anna, saved.audio_key);
    expect(rejected.status).toBe(400);
    expect((await rejected.json()).detail).toMatch(/not usable audio/);
    expect(await playedAudio(anna, saved.audio_key, dir)).toEqual(browser);
    expect(await getStorage().head(`${saved.audio_key}.upload`)).toBeNull();
  });

  it("gives another user's or an upload's key a 404, and refuses formats other than the recorder's", async () => {
    const anna = await as("anna-berger");
    const jonas = await as("jonas-keller");
    const saved = await (await saveLive(anna, livePayload({ display_name: "Nur Anna" }))).json();
    for (const response of [await liveSlot(jonas, saved.audio_key), await confirmLive(jonas, saved.audio_key)]) {
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ detail: "Recording not found" });
    }
    const upload = await (
      await callRoute(
        uploadUrlAction,
        anna("/api/get-upload-url", {
          method: "POST",
          json: { file_name: "a.wav", file_type: "audio/wav", language_code: "de" },
        }),
      )
    ).json();
    expect((await liveSlot(anna, upload.key)).status).toBe(404);
    expect((await liveSlot(anna, "audio/../../etc/passwd")).status).toBe(404);
    expect((await liveSlot(anna, "")).status).toBe(400);
    const text = await liveSlot(anna, saved.audio_key, "text/plain");
    expect(text.status).toBe(400);
    expect(await text.json()).toEqual({ detail: "Unsupported recording format: text/plain" });
    const notYet = await confirmLive(anna, saved.audio_key);
    expect(notYet.status).toBe(400);
    expect(await notYet.json()).toEqual({ detail: "The audio file has not been uploaded yet" });
  });

  it("starts the letter in transcript_and_letter mode: at once with the server's copy, else on confirm", async () => {
    const anna = await as("anna-berger");
    const userId = await idOf("anna-berger");
    const metadata = { template_id: "entlassbrief", transcription_mode: "transcript_and_letter" };
    const withAudio = await saveRealtimeTranscript({
      userId,
      payload: livePayload({ display_name: "Brief sofort", metadata }),
      pcmAudio: pcmSource(pcm),
    });
    const first = await recordingOf(withAudio.audio_key);
    expect(await letterJobOf(first.id)).toMatchObject({ kind: "create", status: "queued" });
    expect((await recordingOf(withAudio.audio_key)).medical_letter_status).toBe("processing");

    const later = await (await saveLive(anna, livePayload({ display_name: "Brief später", metadata }))).json();
    const second = await recordingOf(later.audio_key);
    expect(await letterJobOf(second.id)).toBeUndefined();
    // A recorder that fell back to WAV: re-encoded into the key's container.
    const slot = await (await liveSlot(anna, later.audio_key, "audio/wav")).json();
    await putUpload(slot.url, fs.readFileSync(await makeSpeechWav(dir)), "audio/wav");
    expect((await confirmLive(anna, later.audio_key)).status).toBe(200);
    expect(await letterJobOf(second.id)).toMatchObject({ kind: "create", status: "queued" });
    expect(await recordingOf(later.audio_key)).toMatchObject({ upload_status: "ready", audio_format: "webm" });
    expect((await playedAudio(anna, later.audio_key, dir)).codec).toBe("opus");
  });

  it("keeps the transcript when the server cannot make its copy of the audio", async () => {
    const userId = await idOf("anna-berger");
    const saved = await saveRealtimeTranscript({
      userId,
      payload: livePayload({ display_name: "Abgebrochen" }),
      async *pcmAudio() {
        yield pcm.subarray(0, 8192);
        throw new Error("the session's audio could not be read");
      },
    });
    const row = await recordingOf(saved.audio_key);
    expect(row).toMatchObject({ upload_status: "awaiting_upload", transcription_status: "completed" });
    expect(await getStorage().head(saved.audio_key)).toBeNull();
    expect(await getStorage().head(saved.transcript_key!)).not.toBeNull();
  });
});
