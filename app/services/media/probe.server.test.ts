import { copyFile, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeMp3, makeSpeechWav, makeTempDir, makeTone, removeTempDir } from "../../../tests/support/audio-fixtures";
import {
  ACCEPTED_AUDIO_TYPES,
  MAX_AUDIO_BYTES,
  checkDeclaredAudio,
  mediaConversionHealthCheck,
  validateAudioFile,
} from "./probe.server";
import { unsupported } from "../../../tests/support/media-probe-helpers";

// The split-out pieces have their own test files: media-sniff, media-messages, media-wav, media-mp3,
// media-resample, media-decode, media-ffprobe (the live path's runner), and media-probe-rejections for the
// files validateAudioFile turns away.

let dir: string;
let speechWav: string;
let speechMp3: string;
let taggedMp3: string;

beforeAll(async () => {
  dir = await makeTempDir("skribent-media-probe-");
  speechWav = await makeSpeechWav(dir);
  speechMp3 = await makeMp3(dir, speechWav);
  taggedMp3 = await makeMp3(dir, speechWav, { id3: true });
});

afterAll(async () => {
  await removeTempDir(dir);
});

describe("checkDeclaredAudio (SPEC §5 first-line checks)", () => {
  test.each(ACCEPTED_AUDIO_TYPES)("accepts %s", (type) => {
    expect(checkDeclaredAudio({ type, size: 1000 })).toBeNull();
  });

  test("accepts exactly the maximum size and MIME parameters", () => {
    expect(checkDeclaredAudio({ type: "audio/wav", size: MAX_AUDIO_BYTES })).toBeNull();
    expect(checkDeclaredAudio({ type: "Audio/MPEG; foo=bar", size: 1 })).toBeNull();
  });

  test.each([
    ["application/pdf", "Unsupported file type: application/pdf. Please upload MP3 or WAV files."],
    ["video/webm", "Unsupported file type: video/webm. Please upload MP3 or WAV files."],
    ["", "Unsupported file type: unknown. Please upload MP3 or WAV files."],
    ["audio/ogg", unsupported("audio/ogg")],
    ["audio/webm", unsupported("audio/webm")],
  ])("rejects type %j", (type, message) => {
    expect(checkDeclaredAudio({ type, size: 1000 })).toEqual({ code: "unsupported_type", message });
  });

  test("rejects an empty file", () => {
    expect(checkDeclaredAudio({ type: "audio/mpeg", size: 0 })).toEqual({
      code: "empty",
      message: "Invalid audio data: Empty file",
    });
  });

  test("rejects one byte over the maximum", () => {
    expect(checkDeclaredAudio({ type: "audio/mpeg", size: MAX_AUDIO_BYTES + 1 })).toEqual({
      code: "too_large",
      message: "File is too large (70.1 MB). Maximum size is 70 MB.",
    });
  });
});

describe("validateAudioFile on real audio", () => {
  test("accepts a German speech WAV (16 kHz mono 16-bit)", async () => {
    const result = await validateAudioFile(speechWav, { declaredType: "audio/wav" });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.sniffed).toBe("wav");
    expect(result.probe).toMatchObject({ format: "wav", sampleRate: 16000, channels: 1, codec: "pcm_s16le" });
    expect(result.probe.durationSeconds).toBeGreaterThan(2);
    expect(result.probe.durationSeconds).toBeLessThan(15);
  });

  test("accepts its MP3 (frame header first, no tag) with about the same duration", async () => {
    const head = (await readFile(speechMp3)).subarray(0, 4);
    expect(head[0]).toBe(0xff);
    const [wav, mp3] = await Promise.all([validateAudioFile(speechWav), validateAudioFile(speechMp3)]);
    expect(wav.ok && mp3.ok).toBe(true);
    if (!wav.ok || !mp3.ok) return;
    expect(mp3.sniffed).toBe("mp3");
    expect(mp3.probe).toMatchObject({ format: "mp3", codec: "mp3", sampleRate: 16000, channels: 1 });
    expect(Math.abs(mp3.probe.durationSeconds - wav.probe.durationSeconds)).toBeLessThan(0.3);
  });

  test("accepts an MP3 that starts with an ID3v2 tag", async () => {
    const head = (await readFile(taggedMp3)).subarray(0, 3).toString("latin1");
    expect(head).toBe("ID3");
    const result = await validateAudioFile(taggedMp3, { declaredType: "audio/mpeg" });
    expect(result).toMatchObject({ ok: true, sniffed: "mp3", probe: { format: "mp3", codec: "mp3" } });
  });

  test("ignores the client's MIME type and the file name: a real WAV named .mp3, declared as PDF, is a WAV", async () => {
    const renamed = path.join(dir, "actually-wav.mp3");
    await copyFile(speechWav, renamed);
    const result = await validateAudioFile(renamed, { declaredType: "application/pdf" });
    expect(result).toMatchObject({ ok: true, sniffed: "wav", probe: { format: "wav" } });
  });

  test("files with odd names are probed as plain files", async () => {
    const odd = path.join(dir, "-v quiet concat:a|b;$(touch x).wav");
    await copyFile(speechWav, odd);
    expect(await validateAudioFile(odd)).toMatchObject({ ok: true, sniffed: "wav" });
  });
});

describe("duration cap", () => {
  test.each(["wav", "mp3"] as const)("a 3 s %s tone is too long for a 2 s cap and fine under 4 s", async (format) => {
    const tone = await makeTone(dir, 3, format);
    expect(await validateAudioFile(tone, { maxDurationSeconds: 2 })).toEqual({
      ok: false,
      rejection: { code: "too_long", message: "Recording is too long (0:00:03). Maximum length is 0:00:02." },
    });
    const fine = await validateAudioFile(tone, { maxDurationSeconds: 4 });
    expect(fine.ok).toBe(true);
    if (fine.ok) expect(fine.probe.durationSeconds).toBeCloseTo(3, 0);
  });

  test("the default cap is 4 hours", async () => {
    const tone = await makeTone(dir, 1, "wav");
    expect((await validateAudioFile(tone)).ok).toBe(true);
  });
});

describe("health", () => {
  test("mediaConversionHealthCheck: uploads in process, and ffmpeg named for the live path", async () => {
    const result = await mediaConversionHealthCheck();
    expect(result.status).toBe("healthy");
    expect(result.detail).toMatch(/^uploads: in-process \(WebAssembly\)/);
    expect(result.detail).toMatch(/; live recordings: ffmpeg \S+$/);
  });

  test("without ffmpeg the uploads still convert, but live recordings would not: an error that says which", async () => {
    const result = await mediaConversionHealthCheck({ ffmpegPath: path.join(dir, "no-such-ffmpeg") });
    expect(result.status).toBe("error");
    expect(result.detail).toMatch(/^uploads: in-process \(WebAssembly\)/);
    expect(result.detail).toMatch(/live recordings: cannot start .*no-such-ffmpeg/);
  });
});
