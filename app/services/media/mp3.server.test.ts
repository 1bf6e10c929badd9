import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { makeTempDir, noise, removeTempDir } from "../../../tests/support/audio-fixtures";
import { openFileWindow } from "./file-window.server";
import { declaredDuration, findMp3Stream, parseFrameHeader } from "./mp3-frames.server";
import { mp3MonoBlocks } from "./mp3.server";

// The MP3 path: frames found in JavaScript, decoded by mpg123 in WebAssembly, batch by batch. The fixtures
// are made with ffmpeg (a test-only tool here).

const run = promisify(execFile);
let dir: string;
let stereoTone: string;

async function mp3(name: string, source: string[], codec: string[] = ["-c:a", "libmp3lame", "-b:a", "128k"]) {
  const file = path.join(dir, name);
  await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...source, ...codec, file]);
  return file;
}

beforeAll(async () => {
  dir = await makeTempDir("skribent-media-mp3-");
  // 440 Hz left, 1 kHz right, 44.1 kHz, 3 s.
  stereoTone = await mp3("stereo.mp3", [
    "-f",
    "lavfi",
    "-i",
    "sine=frequency=440:duration=3",
    "-f",
    "lavfi",
    "-i",
    "sine=frequency=1000:duration=3",
    "-filter_complex",
    "amerge",
  ]);
});
afterAll(async () => {
  await removeTempDir(dir);
});

async function decodeFile(file: string) {
  const window = await openFileWindow(file);
  try {
    const stream = await findMp3Stream(window);
    if (!stream) return null;
    let frames = 0;
    let errors = 0;
    const parts: Float32Array[] = [];
    let rate = 0;
    for await (const block of mp3MonoBlocks(window, stream)) {
      frames += block.frames;
      errors += block.errors;
      rate = block.sampleRate;
      parts.push(block.samples);
    }
    const samples = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      samples.set(p, at);
      at += p.length;
    }
    return { stream, frames, errors, rate, samples };
  } finally {
    await window.close();
  }
}

/** Amplitude of `frequency` in the middle half of `signal` (a single-bin DFT). */
function amplitudeAt(signal: Float32Array, rate: number, frequency: number) {
  const from = Math.floor(signal.length / 4);
  const to = Math.floor((signal.length * 3) / 4);
  let re = 0;
  let im = 0;
  for (let i = from; i < to; i++) {
    re += signal[i]! * Math.cos((2 * Math.PI * frequency * i) / rate);
    im += signal[i]! * Math.sin((2 * Math.PI * frequency * i) / rate);
  }
  return (2 * Math.hypot(re, im)) / (to - from);
}

describe("parseFrameHeader", () => {
  test("reads an MPEG-1 layer III header", () => {
    expect(parseFrameHeader(Uint8Array.from([0xff, 0xfb, 0x90, 0x64]))).toEqual({
      version: 1,
      sampleRate: 44_100,
      bitrate: 128,
      channels: 2,
      samplesPerFrame: 1152,
      length: 417,
    });
    expect(parseFrameHeader(Uint8Array.from([0xff, 0xf3, 0x48, 0xc4]))).toMatchObject({
      version: 2,
      sampleRate: 16_000,
      bitrate: 32,
      channels: 1,
      length: 144,
    });
  });

  test.each([
    ["layer II", [0xff, 0xfd, 0x90, 0x64]],
    ["free format", [0xff, 0xfb, 0x00, 0x64]],
    ["bad bitrate", [0xff, 0xfb, 0xf0, 0x64]],
    ["reserved rate", [0xff, 0xfb, 0x9c, 0x64]],
    ["reserved version", [0xff, 0xeb, 0x90, 0x64]],
    ["no sync", [0xfe, 0xfb, 0x90, 0x64]],
  ])("refuses %s", (_label, bytes) => {
    expect(parseFrameHeader(Uint8Array.from(bytes))).toBeNull();
  });
});

describe("decoding", () => {
  test("a stereo tone decodes to its full length, both channels mixed into the mono blocks", async () => {
    const result = await decodeFile(stereoTone);
    expect(result).not.toBeNull();
    const { stream, rate, samples, errors } = result!;
    expect(stream.first).toMatchObject({ sampleRate: 44_100, channels: 2 });
    // The Info header names the frame count; mpg123's gapless mode trims the encoder's delay and padding.
    expect(declaredDuration(stream)).toBeCloseTo(3, 1);
    expect(rate).toBe(44_100);
    expect(errors).toBe(0);
    expect(Math.abs(samples.length - 3 * 44_100)).toBeLessThan(1152);
    // lavfi's sine is 1/8 full scale; each channel contributes half of it to the mean.
    expect(amplitudeAt(samples, 44_100, 440)).toBeCloseTo(1 / 16, 2);
    expect(amplitudeAt(samples, 44_100, 1_000)).toBeCloseTo(1 / 16, 2);
  });

  test("junk between frames is skipped, without a word on the console", async () => {
    const bytes = await readFile(stereoTone);
    const cut = bytes.indexOf(Buffer.from([0xff, 0xfb]), Math.floor(bytes.length / 2));
    const damaged = path.join(dir, "damaged.mp3");
    await writeFile(damaged, Buffer.concat([bytes.subarray(0, cut), noise(5_000, 7), bytes.subarray(cut)]));
    const errorLog = vi.spyOn(console, "error");
    try {
      const result = await decodeFile(damaged);
      expect(errorLog).not.toHaveBeenCalled();
      // Nothing of the tone is lost but the frame or two the bit reservoir tied to the junk.
      expect(Math.abs(result!.samples.length - 3 * 44_100)).toBeLessThan(3 * 1152);
    } finally {
      errorLog.mockRestore();
    }
  });

  test("a frame body of noise is counted as an error, quietly", async () => {
    const bytes = Buffer.from(await readFile(stereoTone));
    const stream = await (async () => {
      const window = await openFileWindow(stereoTone);
      try {
        return (await findMp3Stream(window))!;
      } finally {
        await window.close();
      }
    })();
    // Overwrite the bodies of 20 frames after the first second with noise, headers kept.
    let at = stream.offset;
    for (let i = 0; i < 40; i++) at += parseFrameHeader(bytes, at)!.length;
    for (let i = 0; i < 20; i++) {
      const header = parseFrameHeader(bytes, at)!;
      bytes.set(noise(header.length - 4, i + 1), at + 4);
      at += header.length;
    }
    const corrupt = path.join(dir, "corrupt.mp3");
    await writeFile(corrupt, bytes);
    const errorLog = vi.spyOn(console, "error");
    try {
      const result = await decodeFile(corrupt);
      expect(errorLog).not.toHaveBeenCalled();
      expect(result!.samples.length).toBeGreaterThan(2 * 44_100);
    } finally {
      errorLog.mockRestore();
    }
  });

  test("an MPEG layer II file is not taken for MP3", async () => {
    const mp2 = await mp3(
      "tone.mp2",
      ["-f", "lavfi", "-i", "sine=frequency=440:duration=1"],
      ["-c:a", "mp2", "-f", "mp2"],
    );
    expect(await decodeFile(mp2)).toBeNull();
  });

  test("a 16 kHz mono MP3 (MPEG-2) with an ID3v2 tag in front", async () => {
    const file = await mp3(
      "tagged.mp3",
      ["-f", "lavfi", "-i", "sine=frequency=1000:duration=2:sample_rate=16000"],
      ["-c:a", "libmp3lame", "-b:a", "32k", "-id3v2_version", "4", "-metadata", "title=Test"],
    );
    expect((await readFile(file)).subarray(0, 3).toString("latin1")).toBe("ID3");
    const result = await decodeFile(file);
    expect(result!.stream.first).toMatchObject({ version: 2, sampleRate: 16_000, channels: 1 });
    expect(Math.abs(result!.samples.length - 2 * 16_000)).toBeLessThan(576);
    // 32 kbit/s is lossy enough to cost a few per cent of the tone.
    expect(amplitudeAt(result!.samples, 16_000, 1_000)).toBeCloseTo(1 / 8, 1);
  });
});
