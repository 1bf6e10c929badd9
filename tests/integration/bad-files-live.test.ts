import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { saveRealtimeTranscript } from "~/services/live/save.server";
import { getStorage } from "~/services/storage/storage.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { storedState } from "../support/bad-file-doors";
import { brokenHeaderFiles, wavBomb, wrongMagicFiles, xingBomb, type BadFile } from "../support/bad-file-fixtures";
import { userIdOf } from "../support/letter-fixtures";
import {
  confirmLive,
  livePayload,
  liveSlot,
  makeTonePcm,
  pcmSource,
  putUpload,
  recordingOf,
} from "../support/live-save";
import { callRoute, setupTestApp } from "../setup/app";

// Hostile files as the browser's copy of a live recording (get-upload-url with specific_key, PUT,
// confirm-realtime-audio): refused with a message, the staged upload deleted, and the recording's audio — the
// server's copy made from the streamed PCM — left exactly as it was. A header that lies about the length costs
// nothing: the copy is re-encoded, so only the audio really there is kept.
const app = setupTestApp({ provider: true });
const REJECTED = "The uploaded recording is not usable audio. The recording keeps its previous audio.";
let dir: string;
let anna: ApiClient;
let userId: string;
let audioKey: string;

beforeAll(async () => {
  dir = await makeTempDir("skribent-bad-live-");
  anna = await apiClientFor(app.issuer, "anna-berger");
  await callRoute(filesLoader, anna("/api/files"));
  userId = await userIdOf("anna-berger");
  const pcm = await makeTonePcm(2);
  const saved = await saveRealtimeTranscript({ userId, payload: livePayload(), pcmAudio: pcmSource(pcm) });
  audioKey = saved.audio_key;
});
afterAll(async () => {
  await removeTempDir(dir);
});

async function audioHash() {
  const hash = createHash("sha256");
  for await (const chunk of (await getStorage().getStream(audioKey))!) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** PUTs `file` as the browser's copy and confirms it; the staged object is gone afterwards either way. */
async function sendCopy(file: BadFile) {
  const slot = await (await liveSlot(anna, audioKey, file.type)).json();
  expect((await putUpload(slot.url, file.bytes, file.type)).status).toBe(200);
  const response = await confirmLive(anna, audioKey);
  expect(await getStorage().head(`${audioKey}.upload`)).toBeNull();
  return { status: response.status, body: await response.json() };
}

async function expectRefused(file: BadFile, detail: string) {
  const before = { state: await storedState(userId), audio: await audioHash() };
  expect(await sendCopy(file)).toEqual({ status: 400, body: { detail } });
  expect({ state: await storedState(userId), audio: await audioHash() }).toEqual(before);
}

describe("hostile files as a live recording's audio", () => {
  it.each(wrongMagicFiles())("a $label file is refused; the server's copy stays", async (file) => {
    await expectRefused(file, REJECTED);
  });

  it.each(brokenHeaderFiles())("a broken header is refused: $label", async (file) => {
    await expectRefused(file, REJECTED);
  });

  it("zero bytes", async () => {
    await expectRefused(
      { label: "empty", name: "leer.wav", type: "audio/wav", bytes: Buffer.alloc(0) },
      "Invalid audio data: Empty file",
    );
  });

  it("73,400,321 bytes are refused by the stored size", async () => {
    const before = { state: await storedState(userId), audio: await audioHash() };
    await liveSlot(anna, audioKey, "audio/wav");
    // As if stored past the upload URL (S3 cannot limit a presigned PUT); the local store would answer 413.
    const zeros = Readable.from(
      (function* () {
        for (let left = 73_400_321; left > 0; left -= 1 << 20) yield Buffer.alloc(Math.min(left, 1 << 20));
      })(),
    );
    await getStorage().put({ key: `${audioKey}.upload`, body: zeros, contentType: "audio/wav" });
    const response = await confirmLive(anna, audioKey);
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: { detail: "File is too large (70.1 MB). Maximum size is 70 MB." },
    });
    expect({ state: await storedState(userId), audio: await audioHash() }).toEqual(before);
  }, 60_000);

  it.each([
    ["a WAV whose data chunk claims 4 GiB", () => Promise.resolve(wavBomb()), 2],
    ["an MP3 whose Xing header claims 50 million frames", () => xingBomb(dir), 3],
  ] as const)("%s is re-encoded and kept with its true length", async (_, make, seconds) => {
    const answer = await sendCopy(await make());
    expect(answer.status).toBe(200);
    expect(answer.body.duration_seconds).toBeGreaterThan(seconds - 0.2);
    expect(answer.body.duration_seconds).toBeLessThan(seconds + 0.2);
    expect((await recordingOf(audioKey)).duration_seconds).toBe(answer.body.duration_seconds);
  });
});
