import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { getDb } from "~/models/db.server";
import { formatDuration } from "~/services/media/messages.server";
import { normaliseAudio } from "~/services/speech/normalise-audio.server";
import { setSpeechEngine } from "~/services/speech/engine.server";
import type { SpeechRequest } from "~/services/speech/types";
import { runTranscriptionJob } from "~/services/transcription/job.server";
import { requestTranscription } from "~/services/transcription/transcription.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { narrowPathToNode } from "../support/node-only-path";
import { formUpload, presignedUpload, storedState } from "../support/bad-file-doors";
import { sparseWav, xingBomb, type BadFile } from "../support/bad-file-fixtures";
import { userIdOf } from "../support/letter-fixtures";
import { callRoute, setupTestApp, signedInUser } from "../setup/app";

// Uploads need no ffmpeg and no ffprobe: with a PATH that holds only node, real MP3s and WAVs go through the
// JSON API and the form without JavaScript, are probed, and are converted for the speech engine into 16 kHz
// mono 16-bit WAV of the right length — all inside the process (WAV in JavaScript, MP3 in WebAssembly). Hostile
// and unusable files are refused with the SPEC's messages as before. The fixtures are made with ffmpeg and
// espeak-ng before PATH is narrowed; they are test tools, not the app's.
const app = setupTestApp({ provider: true });
const run = promisify(execFile);
const unsupported = (type: string) => `File type "${type}" is not supported. Please upload only MP3, or WAV files.`;

let dir: string;
let restorePath = () => {};
let anna: ApiClient;
let annaId: string;
let formUser: { id: string; cookie: string };
const files: Record<"wav" | "mp3" | "xing" | "fourHours", BadFile> = {} as never;
let speechSeconds: number;
let fourHoursSeconds: number;
const heard: Array<{ rate: number; channels: number; bits: number; dataBytes: number; seconds: number }> = [];

async function ffmpeg(args: string[]) {
  await run("ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", "-y", ...args]);
}

/** A WAV's fmt fields and data size, read by hand (not by the code under test). */
function wavHeader(file: string) {
  const bytes = fs.readFileSync(file);
  let at = 12;
  let fmt = { rate: 0, channels: 0, bits: 0 };
  while (at + 8 <= bytes.length) {
    const id = bytes.toString("latin1", at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === "fmt ")
      fmt = {
        channels: bytes.readUInt16LE(at + 10),
        rate: bytes.readUInt32LE(at + 12),
        bits: bytes.readUInt16LE(at + 22),
      };
    if (id === "data") return { ...fmt, dataBytes: Math.min(size, bytes.length - at - 8) };
    at += 8 + size + (size & 1);
  }
  throw new Error(`${file}: no data chunk`);
}

beforeAll(async () => {
  dir = await makeTempDir("skribent-no-ffmpeg-");
  // German speech, then as a 44.1 kHz stereo 16-bit WAV and a 44.1 kHz stereo MP3, so conversion has to
  // resample and mix down.
  const speech = await makeSpeechWav(dir);
  speechSeconds = (fs.statSync(speech).size - 44) / 32_000;
  const wav = path.join(dir, "sprechstunde.wav");
  const mp3 = path.join(dir, "sprechstunde.mp3");
  await ffmpeg(["-i", speech, "-ar", "44100", "-ac", "2", "-c:a", "pcm_s16le", wav]);
  await ffmpeg(["-i", speech, "-ar", "44100", "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", mp3]);
  files.wav = { label: "wav", name: "sprechstunde.wav", type: "audio/wav", bytes: fs.readFileSync(wav) };
  files.mp3 = { label: "mp3", name: "sprechstunde.mp3", type: "audio/mpeg", bytes: fs.readFileSync(mp3) };
  files.xing = await xingBomb(dir);
  // Really over 4 hours, in 14 MB: 10 s of 8 kbit/s MPEG-2.5 frames (no Xing header, so the length is the
  // bytes at the bitrate, as ffprobe estimated it) repeated to a little over 4 hours.
  const piece = path.join(dir, "piece.mp3");
  await ffmpeg(
    ["-f", "lavfi", "-i", "sine=frequency=300:duration=10:sample_rate=8000"].concat([
      "-c:a",
      "libmp3lame",
      "-b:a",
      "8k",
      "-write_xing",
      "0",
      "-id3v2_version",
      "0",
      "-write_id3v1",
      "0",
      piece,
    ]),
  );
  const frames = fs.readFileSync(piece);
  const pieceSeconds = (frames.length * 8) / 8_000;
  const repeats = Math.ceil((4 * 3600 + 5) / pieceSeconds);
  fourHoursSeconds = repeats * pieceSeconds;
  files.fourHours = {
    label: "four-hours",
    name: "vier-stunden.mp3",
    type: "audio/mpeg",
    bytes: Buffer.concat(Array.from({ length: repeats }, () => frames)),
  };

  anna = await apiClientFor(app.issuer, "anna-berger");
  await callRoute(filesLoader, anna("/api/files"));
  annaId = await userIdOf("anna-berger");
  const signed = await signedInUser({ email: "no-ffmpeg@praxis.example" });
  formUser = { id: signed.user.id, cookie: signed.cookie };
  setSpeechEngine({
    name: "local",
    async transcribe(req: SpeechRequest) {
      heard.push({ ...wavHeader(req.file), seconds: req.durationSeconds });
      const words = [{ text: "Guten", start: 0, end: 0.4, confidence: 0.9, speaker: "S1" }];
      return { engine: "local", language: req.language, audioSeconds: 0, words };
    },
    async check() {
      return { status: "healthy" };
    },
  });

  restorePath = narrowPathToNode(dir);
}, 180_000);

afterAll(async () => {
  restorePath();
  setSpeechEngine(undefined);
  await removeTempDir(dir);
});

async function transcribe(userId: string, key: string) {
  const { job_name } = await requestTranscription({ userId, key });
  const job = await getDb()
    .selectFrom("transcription_jobs")
    .where("job_name", "=", job_name)
    .select("id")
    .executeTakeFirstOrThrow();
  const outcome = await runTranscriptionJob(job.id);
  return { outcome, heard: heard.at(-1)! };
}

async function recordingOf(key: string) {
  return getDb()
    .selectFrom("recordings")
    .where("storage_key", "=", key)
    .select(["duration_seconds", "audio_format", "upload_status"])
    .executeTakeFirstOrThrow();
}

describe("with neither ffmpeg nor ffprobe on the PATH", () => {
  it("neither can be found", () => {
    const env = { ...process.env, PATH: process.env.PATH };
    for (const program of ["ffmpeg", "ffprobe"]) {
      expect(() => execFileSync("/usr/bin/which", [program], { env })).toThrow();
    }
    expect(execFileSync("/usr/bin/which", ["node"], { env }).toString()).toContain("node");
  });

  describe.each(["wav", "mp3"] as const)("a real %s", (format) => {
    it("through the JSON API: accepted, then heard as 16 kHz mono 16-bit of its true length", async () => {
      const outcome = await presignedUpload(anna, files[format]);
      expect(outcome).toMatchObject({ status: 200, step: "confirm" });
      const row = await recordingOf(outcome.key!);
      expect(row).toMatchObject({ upload_status: "ready", audio_format: format });
      expect(Math.abs(row.duration_seconds! - speechSeconds)).toBeLessThan(0.1);

      const { outcome: done, heard: wav } = await transcribe(annaId, outcome.key!);
      expect(done).toBe("completed");
      expect(wav).toMatchObject({ rate: 16_000, channels: 1, bits: 16 });
      expect(wav.dataBytes).toBe(wav.seconds * 32_000);
      // The MP3 is trimmed gaplessly to the encoder's input; the WAV is exactly its samples, resampled.
      expect(Math.abs(wav.seconds - speechSeconds)).toBeLessThan(0.01);
    });

    it("through the form without JavaScript: accepted and converted the same way", async () => {
      const before = (await storedState(formUser.id)).objects.length;
      expect(await formUpload(formUser.cookie, files[format])).toEqual({ status: 302, message: "" });
      const rows = await getDb()
        .selectFrom("recordings")
        .where("owner_id", "=", formUser.id)
        .where("audio_format", "=", format)
        .select(["storage_key", "duration_seconds"])
        .execute();
      expect(rows).toHaveLength(1);
      expect((await storedState(formUser.id)).objects.length).toBe(before + 1);
      const { outcome, heard: wav } = await transcribe(formUser.id, rows[0]!.storage_key);
      expect(outcome).toBe("completed");
      expect(wav).toMatchObject({ rate: 16_000, channels: 1, bits: 16 });
      expect(Math.abs(wav.seconds - speechSeconds)).toBeLessThan(0.01);
    });
  });

  describe("refusals keep the SPEC's messages", () => {
    const cases: Array<[string, () => BadFile | Parameters<typeof formUpload>[1], string]> = [
      [
        "text renamed .wav",
        () => ({ label: "text", name: "notiz.wav", type: "audio/wav", bytes: Buffer.from("Kein Audio, nur Text.\n") }),
        unsupported("audio/wav"),
      ],
      [
        "an empty file",
        () => ({ label: "empty", name: "leer.wav", type: "audio/wav", bytes: Buffer.alloc(0) }),
        "Invalid audio data: Empty file",
      ],
      [
        "an MP3 whose Xing header claims 362 hours",
        () => files.xing,
        "Recording is too long (362:48:42). Maximum length is 4:00:00.",
      ],
    ];
    cases.push([
      "an MP3 really a few seconds over 4 hours",
      () => files.fourHours,
      // Evaluated when the tests run, once the fixture exists.
      "four-hours",
    ]);
    const messageFor = (message: string) =>
      message === "four-hours"
        ? `Recording is too long (${formatDuration(Math.round(fourHoursSeconds))}). Maximum length is 4:00:00.`
        : message;

    it.each(cases)("%s, through the JSON API", async (_label, file, message) => {
      const before = await storedState(annaId);
      const outcome = await presignedUpload(anna, file() as BadFile);
      expect({ status: outcome.status, message: outcome.message }).toEqual({
        status: 400,
        message: messageFor(message),
      });
      expect(await storedState(annaId)).toEqual(before);
    });

    it.each(cases)("%s, through the form", async (_label, file, message) => {
      const before = await storedState(formUser.id);
      expect(await formUpload(formUser.cookie, file())).toEqual({ status: 400, message: messageFor(message) });
      expect(await storedState(formUser.id)).toEqual(before);
    });

    it("73,400,321 bytes, through the form", async () => {
      const file = sparseWav(dir, 73_400_321);
      const before = await storedState(formUser.id);
      const upload = { label: "oversize", name: "gross.wav", type: "audio/wav", stream: fs.createReadStream(file) };
      expect(await formUpload(formUser.cookie, upload)).toEqual({
        status: 400,
        message: "File is too large (70.1 MB). Maximum size is 70 MB.",
      });
      expect(await storedState(formUser.id)).toEqual(before);
    }, 60_000);
  });

  it("the decoded length decides: 4 hours of real MP3 decoded against a 4-hour cap stop a second past it", async () => {
    expect(fourHoursSeconds).toBeGreaterThan(4 * 3600);
    const input = path.join(dir, "four-hours.mp3");
    fs.writeFileSync(input, files.fourHours.bytes);
    const out = fs.mkdtempSync(path.join(dir, "normalised-"));
    const rssBefore = process.memoryUsage().rss;
    await expect(normaliseAudio({ input, outputDir: out, maxDurationSeconds: 4 * 3600 })).rejects.toMatchObject({
      kind: "permanent",
      options: { userMessageKey: "transcriptions:errors.tooLong" },
    });
    expect(fs.statSync(path.join(out, "speech-16k.wav")).size).toBe(44 + (4 * 3600 + 1) * 32_000);
    // Streamed: 4 hours of 16 kHz float would be 920 MB; the process grows by a small fraction of that.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
  }, 240_000);
});
