import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  makeFake,
  makeSparseFile,
  makeSpeechWav,
  makeTempDir,
  noise,
  removeTempDir,
} from "../../tests/support/audio-fixtures";
import { probeAudioFile } from "./media-ffprobe.server";
import { MAX_AUDIO_BYTES } from "./media-messages.server";
import { validateAudioFile } from "./media-probe.server";
import { bytes, makeMarkerProbe, unsupported } from "./media-probe-test-helpers";
import { sniffAudioType } from "./media-sniff.server";

// What validateAudioFile turns away: by size and magic bytes before ffprobe ever runs, and what
// ffprobe opens but cannot decode.

let dir: string;
let speechWav: string;

beforeAll(async () => {
  dir = await makeTempDir("skribent-media-rejections-");
  speechWav = await makeSpeechWav(dir);
});

afterAll(async () => {
  await removeTempDir(dir);
});

const markerProbe = (name: string) => makeMarkerProbe(dir, name);

describe("validateAudioFile rejects before probing", () => {
  test("the marker stand-in for ffprobe does record a run", async () => {
    const probe = await markerProbe("control");
    const result = await validateAudioFile(speechWav, { ffprobePath: probe.script });
    expect(probe.ran()).toBe(true);
    expect(result).toEqual({ ok: false, rejection: { code: "unreadable", message: unsupported("audio/wav") } });
  });

  test.each([
    ["pdf", "application/pdf"],
    ["html", "text/html"],
  ] as const)("a %s named .mp3 is rejected by its magic bytes; ffprobe never runs", async (kind, type) => {
    const file = await makeFake(dir, kind, `report-${kind}.mp3`);
    const probe = await markerProbe(`fake-${kind}`);
    const result = await validateAudioFile(file, { declaredType: "audio/mpeg", ffprobePath: probe.script });
    expect(result).toEqual({ ok: false, rejection: { code: "unsupported_type", message: unsupported(type) } });
    expect(probe.ran()).toBe(false);
  });

  test("unrecognisable bytes name the declared type (or 'unknown')", async () => {
    const file = await makeFake(dir, "garbage", "noise.mp3");
    const probe = await markerProbe("garbage");
    expect(await validateAudioFile(file, { declaredType: "audio/mpeg", ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("audio/mpeg") },
    });
    expect(await validateAudioFile(file, { ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("unknown") },
    });
    expect(probe.ran()).toBe(false);
  });

  test("an empty file gets the empty message", async () => {
    const file = await makeFake(dir, "empty", "empty.mp3");
    const probe = await markerProbe("empty");
    expect(await validateAudioFile(file, { ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "empty", message: "Invalid audio data: Empty file" },
    });
    expect(probe.ran()).toBe(false);
  });

  test("73,400,321 bytes are too large before anything else, even with a WAV header", async () => {
    const wavHead = (await readFile(speechWav)).subarray(0, 64);
    const file = await makeSparseFile(dir, MAX_AUDIO_BYTES + 1, "big.wav", wavHead);
    const probe = await markerProbe("too-large");
    expect(await validateAudioFile(file, { ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "too_large", message: "File is too large (70.1 MB). Maximum size is 70 MB." },
    });
    expect(probe.ran()).toBe(false);
  });

  test("exactly 73,400,320 bytes of garbage pass the size check and fail on type", async () => {
    const file = await makeSparseFile(dir, MAX_AUDIO_BYTES, "max.mp3", noise(64, 42).fill(0x41, 0, 4));
    const probe = await markerProbe("max-size");
    expect(await validateAudioFile(file, { ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("unknown") },
    });
    expect(probe.ran()).toBe(false);
  });
});

describe("validateAudioFile rejects what ffprobe cannot decode", () => {
  test("noise behind a valid MPEG frame header: ffprobe opens it, but nothing decodes", async () => {
    const file = await makeFake(dir, "mpeg-garbage", "noise-frames.mp3");
    expect(sniffAudioType((await readFile(file)).subarray(0, 64))).toBe("mp3");
    await expect(probeAudioFile(file)).rejects.toMatchObject({ name: "MediaProbeError", reason: "not_audio" });
    expect(await validateAudioFile(file, { declaredType: "audio/mpeg" })).toEqual({
      ok: false,
      rejection: { code: "unreadable", message: unsupported("audio/mpeg") },
    });
  });

  test("an MP3 cut off inside its first frame: ffprobe fails", async () => {
    const file = await makeFake(dir, "truncated", "cut.mp3");
    await expect(probeAudioFile(file)).rejects.toMatchObject({ reason: "failed" });
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
    await expect(probeAudioFile(file)).resolves.toMatchObject({ format: "wav" });
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "unreadable", message: unsupported("audio/mpeg") },
    });
  });
});
