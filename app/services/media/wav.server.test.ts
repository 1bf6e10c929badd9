import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeTempDir, removeTempDir } from "../../../tests/support/audio-fixtures";
import { openFileWindow } from "./file-window.server";
import { readWavLayout, wavMonoBlocks, type WavLayout } from "./wav.server";

// The WAV parser against ffmpeg's own reading of the same files (ffmpeg only makes and checks the fixtures
// here; the app no longer runs it for uploads), and against hand-made headers that lie or break.

const run = promisify(execFile);
let dir: string;
let counter = 0;

beforeAll(async () => {
  dir = await makeTempDir("skribent-media-wav-");
});
afterAll(async () => {
  await removeTempDir(dir);
});

async function withWav<T>(bytes: Buffer, check: (file: Awaited<ReturnType<typeof openFileWindow>>) => Promise<T>) {
  const file = path.join(dir, `hand-${counter++}.wav`);
  await writeFile(file, bytes);
  const window = await openFileWindow(file);
  try {
    return await check(window);
  } finally {
    await window.close();
  }
}

async function decodeAll(file: string) {
  const window = await openFileWindow(file);
  try {
    const layout = await readWavLayout(window);
    const parts: number[] = [];
    for await (const block of wavMonoBlocks(window, layout, 1000)) parts.push(...block);
    return { layout, samples: Float32Array.from(parts) };
  } finally {
    await window.close();
  }
}

/** A WAV header (RIFF or RIFX) with a `fmt ` of the given fields, optional chunks before it, then `data`. */
function handWav(
  data: Buffer,
  fmt: { tag?: number; channels?: number; rate?: number; bits?: number; extra?: Buffer },
  options: { bigEndian?: boolean; before?: Buffer; dataSize?: number; fmtSize?: number } = {},
) {
  const { tag = 1, channels = 1, rate = 16_000, bits = 16 } = fmt;
  const be = options.bigEndian ?? false;
  const u16 = (v: number) => {
    const b = Buffer.alloc(2);
    if (be) b.writeUInt16BE(v);
    else b.writeUInt16LE(v);
    return b;
  };
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    if (be) b.writeUInt32BE(v);
    else b.writeUInt32LE(v);
    return b;
  };
  const block = channels * Math.ceil(bits / 8);
  const fmtBody = Buffer.concat([
    u16(tag),
    u16(channels),
    u32(rate),
    u32(Math.min(rate * block, 0xffffffff)),
    u16(block),
    u16(bits),
    fmt.extra ?? Buffer.alloc(0),
  ]);
  const chunks = Buffer.concat([
    options.before ?? Buffer.alloc(0),
    Buffer.from("fmt ", "latin1"),
    u32(options.fmtSize ?? fmtBody.length),
    fmtBody,
    Buffer.from("data", "latin1"),
    u32(options.dataSize ?? data.length),
    data,
  ]);
  return Buffer.concat([
    Buffer.from(be ? "RIFX" : "RIFF", "latin1"),
    u32(4 + chunks.length),
    Buffer.from("WAVE", "latin1"),
    chunks,
  ]);
}

const int16 = (...values: number[]) => Buffer.from(new Int16Array(values).buffer);

describe("readWavLayout and wavMonoBlocks agree with ffmpeg", () => {
  test.each([
    ["pcm_u8", "pcm_u8"],
    ["pcm_s16le", "pcm_s16le"],
    ["pcm_s24le", "pcm_s24le"],
    ["pcm_s32le", "pcm_s32le"],
    ["pcm_f32le", "pcm_f32le"],
    ["pcm_f64le", "pcm_f64le"],
    ["pcm_alaw", "pcm_alaw"],
    ["pcm_mulaw", "pcm_mulaw"],
  ])("%s", async (codec, expectedCodec) => {
    const file = path.join(dir, `${codec}.wav`);
    const tone = ["-f", "lavfi", "-i", "sine=frequency=440:duration=0.25:sample_rate=22050"];
    await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...tone, "-c:a", codec, file]);
    const { stdout } = await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", file, "-f", "f32le", "-"], {
      encoding: "buffer",
      maxBuffer: 1 << 24,
    });
    const reference = new Float32Array(stdout.buffer, stdout.byteOffset, stdout.length / 4);
    const { layout, samples } = await decodeAll(file);
    expect(layout).toMatchObject({ codec: expectedCodec, channels: 1, sampleRate: 22_050, frames: reference.length });
    expect(samples.length).toBe(reference.length);
    let worst = 0;
    for (let i = 0; i < samples.length; i++) worst = Math.max(worst, Math.abs(samples[i]! - reference[i]!));
    expect(worst).toBeLessThan(1e-6);
  });

  test("WAVE_FORMAT_EXTENSIBLE (as ffmpeg writes 24-bit) is read through its sub-format", async () => {
    const file = path.join(dir, "pcm_s24le.wav");
    const { layout } = await decodeAll(file);
    expect(layout).toMatchObject({ encoding: "signed", bytesPerSample: 3 });
  });
});

describe("readWavLayout by hand-made headers", () => {
  test("stereo is mixed down to the channels' mean", async () => {
    const bytes = handWav(int16(16384, 0, -32768, 32767), { channels: 2 });
    const samples = await withWav(bytes, async (file) => {
      const out: number[] = [];
      for await (const block of wavMonoBlocks(file, await readWavLayout(file))) out.push(...block);
      return out;
    });
    expect(samples).toEqual([0.25, -0.5 / 32768]);
  });

  test("big-endian RIFX", async () => {
    const data = Buffer.alloc(4);
    data.writeInt16BE(16384, 0);
    data.writeInt16BE(-16384, 2);
    await withWav(handWav(data, {}, { bigEndian: true }), async (file) => {
      const layout = await readWavLayout(file);
      expect(layout).toMatchObject({ littleEndian: false, codec: "pcm_s16be", frames: 2 });
      const out: number[] = [];
      for await (const block of wavMonoBlocks(file, layout)) out.push(...block);
      expect(out).toEqual([0.5, -0.5]);
    });
  });

  test("skips other chunks, odd-sized ones with their pad byte", async () => {
    const list = Buffer.concat([Buffer.from("LIST", "latin1"), Buffer.from([3, 0, 0, 0]), Buffer.from("abc\0")]);
    await withWav(handWav(int16(1, 2, 3), {}, { before: list }), async (file) => {
      expect(await readWavLayout(file)).toMatchObject({ frames: 3, dataOffset: 12 + 12 + 8 + 16 + 8 });
    });
  });

  test("a data size beyond the file, 0 or 0xFFFFFFFF runs to the end of the file", async () => {
    for (const dataSize of [0xfffffff0, 0, 0xffffffff]) {
      await withWav(handWav(int16(1, 2, 3, 4), {}, { dataSize }), async (file) => {
        expect((await readWavLayout(file)).frames).toBe(4);
      });
    }
  });

  test("a data size smaller than the file counts, and a half frame at the end is left out", async () => {
    await withWav(handWav(int16(1, 2, 3, 4), {}, { dataSize: 5 }), async (file) => {
      expect((await readWavLayout(file)).frames).toBe(2);
    });
  });

  test.each<[string, Buffer, string]>([
    ["not RIFF", Buffer.from("RIFX\0\0\0\0AVI junkjunk", "latin1"), "failed"],
    ["a fmt chunk of 8 bytes", handWav(int16(1), {}, { fmtSize: 8 }), "failed"],
    ["a fmt cut off", handWav(int16(1), {}).subarray(0, 30), "failed"],
    ["data before fmt", Buffer.from("RIFF\x10\0\0\0WAVEdata\x02\0\0\0\x01\x00", "latin1"), "failed"],
    ["no channels", handWav(int16(1), { channels: 0 }), "failed"],
    ["sample rate 0", handWav(int16(1), { rate: 0 }), "failed"],
    ["IMA ADPCM", handWav(int16(1, 2), { tag: 0x11, bits: 4 }), "not_audio"],
    ["64-bit integers", handWav(Buffer.alloc(16), { bits: 64 }), "not_audio"],
    ["an empty data chunk", handWav(Buffer.alloc(0), {}, { dataSize: 2 }), "not_audio"],
    ["WAVE_FORMAT_EXTENSIBLE without its extension", handWav(int16(1), { tag: 0xfffe }), "failed"],
  ])("refuses %s", async (_label, bytes, reason) => {
    await withWav(bytes, async (file) => {
      await expect(readWavLayout(file)).rejects.toMatchObject({ name: "MediaProbeError", reason });
    });
  });

  test("keeps the header's rate, however absurd, for the caller's range check", async () => {
    await withWav(handWav(int16(1, 2), { rate: 0xffffffff }), async (file) => {
      expect((await readWavLayout(file)).sampleRate).toBe(0xffffffff);
    });
  });

  test("NaN and infinite float samples come out finite", async () => {
    const data = Buffer.from(new Float32Array([Number.NaN, Number.POSITIVE_INFINITY, -0.5]).buffer);
    await withWav(handWav(data, { tag: 3, bits: 32 }), async (file) => {
      const layout: WavLayout = await readWavLayout(file);
      const out: number[] = [];
      for await (const block of wavMonoBlocks(file, layout)) out.push(...block);
      expect(out).toEqual([0, 8, -0.5]);
    });
  });
});
