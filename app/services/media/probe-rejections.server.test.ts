import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import {
  makeFake,
  makeSparseFile,
  makeSpeechWav,
  makeTempDir,
  noise,
  removeTempDir,
} from "../../../tests/support/audio-fixtures";
import { probeAudioFile } from "./decode.server";
import { MAX_AUDIO_BYTES } from "./messages.server";
import { validateAudioFile } from "./probe.server";
import { bytes, unsupported } from "../../../tests/support/media-probe-helpers";
import { sniffAudioType } from "./sniff.server";

// What validateAudioFile turns away: by size and magic bytes before any decoder runs, and what the in-process
// probe opens but cannot decode. The probe is watched (the real one still runs) to prove which files reach it.
vi.mock("./decode.server", async (original) => {
  const real = await original<typeof import("./decode.server")>();
  return { ...real, probeAudioFile: vi.fn(real.probeAudioFile) };
});
const probed = () => vi.mocked(probeAudioFile).mock.calls.length > 0;

let dir: string;
let speechWav: string;

beforeAll(async () => {
  dir = await makeTempDir("skribent-media-rejections-");
  speechWav = await makeSpeechWav(dir);
});

afterAll(async () => {
  await removeTempDir(dir);
});

beforeEach(() => {
  vi.mocked(probeAudioFile).mockClear();
});

describe("validateAudioFile rejects before probing", () => {
  test("the watch on the probe does see a run", async () => {
    expect(await validateAudioFile(speechWav)).toMatchObject({ ok: true });
    expect(probed()).toBe(true);
  });

  test.each([
    ["pdf", "application/pdf"],
    ["html", "text/html"],
  ] as const)("a %s named .mp3 is rejected by its magic bytes; no decoder runs", async (kind, type) => {
    const file = await makeFake(dir, kind, `report-${kind}.mp3`);
    const result = await validateAudioFile(file, { declaredType: "audio/mpeg" });
    expect(result).toEqual({ ok: false, rejection: { code: "unsupported_type", message: unsupported(type) } });
    expect(probed()).toBe(false);
  });

  test("unrecognisable bytes name the declared type (or 'unknown')", async () => {
    const file = await makeFake(dir, "garbage", "noise.mp3");
    expect(await validateAudioFile(file, { declaredType: "audio/mpeg" })).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("audio/mpeg") },
    });
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("unknown") },
    });
    expect(probed()).toBe(false);
  });

  test("an empty file gets the empty message", async () => {
    const file = await makeFake(dir, "empty", "empty.mp3");
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "empty", message: "Invalid audio data: Empty file" },
    });
    expect(probed()).toBe(false);
  });

  test("73,400,321 bytes are too large before anything else, even with a WAV header", async () => {
    const wavHead = (await readFile(speechWav)).subarray(0, 64);
    const file = await makeSparseFile(dir, MAX_AUDIO_BYTES + 1, "big.wav", wavHead);
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "too_large", message: "File is too large (70.1 MB). Maximum size is 70 MB." },
    });
    expect(probed()).toBe(false);
  });

  test("exactly 73,400,320 bytes of garbage pass the size check and fail on type", async () => {
    const file = await makeSparseFile(dir, MAX_AUDIO_BYTES, "max.mp3", noise(64, 42).fill(0x41, 0, 4));
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("unknown") },
    });
    expect(probed()).toBe(false);
  });
});

describe("validateAudioFile rejects what the probe cannot decode", () => {
  test("noise behind a valid MPEG frame header: no second frame follows it, so nothing is decoded", async () => {
    const file = await makeFake(dir, "mpeg-garbage", "noise-frames.mp3");
    expect(sniffAudioType((await readFile(file)).subarray(0, 64))).toBe("mp3");
    await expect(probeAudioFile(file, "mp3")).rejects.toMatchObject({ name: "MediaProbeError", reason: "failed" });
    expect(await validateAudioFile(file, { declaredType: "audio/mpeg" })).toEqual({
      ok: false,
      rejection: { code: "unreadable", message: unsupported("audio/mpeg") },
    });
  });

  test("an MP3 cut off inside its first frame: the probe fails", async () => {
    const file = await makeFake(dir, "truncated", "cut.mp3");
    await expect(probeAudioFile(file, "mp3")).rejects.toMatchObject({ reason: "failed" });
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "unreadable", message: unsupported("audio/mpeg") },
    });
  });

  test("the container must agree with the magic bytes: an ID3 tag in front of a WAV", async () => {
    const id3Header = bytes("ID3", 4, 0, 0, 0, 0, 0, 0);
    const file = path.join(dir, "id3-then-wav.mp3");
    await writeFile(file, Buffer.concat([id3Header, await readFile(speechWav)]));
    expect(sniffAudioType(id3Header)).toBe("mp3");
    // Read as the MP3 its magic bytes claim, it holds no MPEG frames; only as a WAV would it open.
    await expect(probeAudioFile(file, "mp3")).rejects.toMatchObject({ reason: "failed" });
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "unreadable", message: unsupported("audio/mpeg") },
    });
  });
});
