import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action as audioAction } from "~/routes/_app._index/route";
import { loader as filesLoader } from "~/routes/api.files";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { getDb } from "~/models/db.server";
import { normaliseAudio } from "~/services/speech/normalise-audio.server";
import { setSpeechEngine } from "~/services/speech/engine.server";
import type { SpeechRequest } from "~/services/speech/types";
import { runTranscriptionJob } from "~/services/transcription/job.server";
import { requestTranscription } from "~/services/transcription/transcription.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { presignedUpload, storedState } from "../support/bad-file-doors";
import { gzipBomb, wavBomb, xingBomb } from "../support/bad-file-fixtures";
import { userIdOf } from "../support/letter-fixtures";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Bodies and files that would be small on the wire and huge once unpacked or decoded. No door inflates a request
// body: a gzip Content-Encoding is not undone anywhere (Express has no body parser here, Remix's adapter passes the
// stream on), so the ~1 MiB of gzip is read as it is and refused — the process's peak memory stays well below the
// 1 GiB it would take to inflate it. Transcription decodes with ffmpeg bounded by the duration cap (-t), measures
// the decoded audio, and bills that: a header's claim of hours neither reaches the engine nor the bill.
const app = setupTestApp({ provider: true });
const MiB = 1024 * 1024;
const bomb = gzipBomb();
let dir: string;
let anna: ApiClient;
let annaId: string;
const heard: Array<{ seconds: number; bytes: number }> = [];

beforeAll(async () => {
  dir = await makeTempDir("skribent-bad-bombs-");
  anna = await apiClientFor(app.issuer, "anna-berger");
  await callRoute(filesLoader, anna("/api/files"));
  annaId = await userIdOf("anna-berger");
  setSpeechEngine({
    name: "local",
    async transcribe(req: SpeechRequest) {
      heard.push({ seconds: req.durationSeconds, bytes: fs.statSync(req.file).size });
      const words = [{ text: "Guten", start: 0, end: 0.4, confidence: 0.9, speaker: "S1" }];
      return { engine: "local", language: req.language, audioSeconds: 0, words };
    },
    async check() {
      return { status: "healthy" };
    },
  });
});
afterAll(async () => {
  setSpeechEngine(undefined);
  await removeTempDir(dir);
});

function peakRss() {
  return process.resourceUsage().maxRSS * 1024;
}

describe("a gzip body that would inflate to 1 GiB", () => {
  it("is what the fixture says: 64 gzip members of 16 MiB zeros in about 1 MiB", () => {
    expect(bomb.body.length).toBeLessThan(1.1 * MiB);
    expect(zlib.gunzipSync(bomb.member).length).toBe(16 * MiB);
    expect(bomb.body.length).toBe(bomb.member.length * 64);
  });

  it("to the upload form: read as it is, no file found, nothing stored", async () => {
    const { cookie, user } = await signedInUser({ email: "gzip-form@praxis.example" });
    const before = { state: await storedState(user.id), peak: peakRss() };
    const headers = {
      "Content-Type": "multipart/form-data; boundary=----skribent",
      "Content-Encoding": "gzip",
      "Sec-Fetch-Site": "same-origin",
    };
    const response = await callRoute(
      audioAction,
      request("/?index", { method: "POST", cookie, headers, body: bomb.body }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe("Ungültige Audiodaten: Leere Datei");
    expect(peakRss() - before.peak).toBeLessThan(256 * MiB);
    expect(await storedState(user.id)).toEqual(before.state);
  });

  it("to a JSON endpoint: not JSON once read as it is", async () => {
    const before = { state: await storedState(annaId), peak: peakRss() };
    const headers = { "Content-Type": "application/json", "Content-Encoding": "gzip" };
    const response = await callRoute(
      uploadUrlAction,
      anna("/api/get-upload-url", { method: "POST", headers, body: bomb.body }),
    );
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: { detail: "Invalid JSON body" },
    });
    expect(peakRss() - before.peak).toBeLessThan(256 * MiB);
    expect(await storedState(annaId)).toEqual(before.state);
  });

  it("PUT to an upload URL: stored as it is, then refused by its magic bytes", async () => {
    const before = { state: await storedState(annaId), peak: peakRss() };
    const outcome = await presignedUpload(anna, { name: "x.wav", type: "audio/wav", bytes: bomb.body });
    expect(outcome).toMatchObject({
      status: 400,
      message: 'File type "audio/wav" is not supported. Please upload only MP3, or WAV files.',
    });
    expect(peakRss() - before.peak).toBeLessThan(256 * MiB);
    expect(await storedState(annaId)).toEqual(before.state);
  });
});

describe("headers that lie about the length, through transcription", () => {
  async function transcribe(key: string) {
    const { job_name } = await requestTranscription({ userId: annaId, key });
    const job = await getDb()
      .selectFrom("transcription_jobs")
      .where("job_name", "=", job_name)
      .select("id")
      .executeTakeFirstOrThrow();
    const outcome = await runTranscriptionJob(job.id);
    const billed = await getDb()
      .selectFrom("usage_events")
      .where("user_id", "=", annaId)
      .where("endpoint", "=", "transcribe_v2")
      .orderBy("id", "desc")
      .select("units")
      .executeTakeFirstOrThrow();
    return { outcome, billed: Number(billed.units), heard: heard.at(-1)! };
  }

  it("a WAV claiming 37 hours is heard and billed for its true 2 s", async () => {
    const { key, status } = await presignedUpload(anna, wavBomb());
    expect(status).toBe(200);
    const result = await transcribe(key!);
    expect(result.outcome).toBe("completed");
    // ffmpeg's WAV header (44 bytes plus a LIST chunk) is all that is added to 2 s of 16 kHz 16-bit PCM.
    expect(result.heard.bytes - 2 * 32_000).toBeLessThan(100);
    expect(result.heard.seconds).toBeCloseTo(2, 2);
    expect(result.billed).toBeCloseTo(2, 2);
  });

  it("an MP3 whose Xing header claims 0.26 s is heard and billed for its true length", async () => {
    const liar = await xingBomb(dir);
    const at = Math.max(liar.bytes.indexOf("Xing"), liar.bytes.indexOf("Info"));
    liar.bytes.writeUInt32BE(10, at + 8);
    const { key, status } = await presignedUpload(anna, liar);
    expect(status).toBe(200);
    const row = await getDb()
      .selectFrom("recordings")
      .where("storage_key", "=", key!)
      .select("duration_seconds")
      .executeTakeFirstOrThrow();
    expect(row.duration_seconds).toBeLessThan(0.3);
    const result = await transcribe(key!);
    expect(result.outcome).toBe("completed");
    expect(result.heard.seconds).toBeGreaterThan(2.9);
    expect(result.billed).toBeCloseTo(result.heard.seconds, 3);
  });

  it("decoding stops at the cap: audio longer than the cap is refused, never converted whole", async () => {
    const liar = await xingBomb(dir);
    const input = path.join(dir, "three-seconds.mp3");
    fs.writeFileSync(input, liar.bytes);
    const out = fs.mkdtempSync(path.join(dir, "normalised-"));
    await expect(normaliseAudio({ input, outputDir: out, maxDurationSeconds: 1 })).rejects.toMatchObject({
      kind: "permanent",
      options: { userMessageKey: "transcriptions:errors.tooLong" },
    });
    // ffmpeg wrote at most cap + 1 s of 16 kHz mono 16-bit PCM (and its header), not the file's 3 s.
    expect(fs.statSync(path.join(out, "speech-16k.wav")).size).toBeLessThan(2 * 32_000 + 100);
  });
});
