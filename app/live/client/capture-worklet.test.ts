import { describe, expect, it } from "vitest";
import { floatToInt16, PcmChunker, Resampler } from "./capture-worklet.js";

function sine(frequency: number, rate: number, seconds: number, amplitude = 0.5) {
  const out = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin((2 * Math.PI * frequency * i) / rate);
  return out;
}

/** Feeds `input` in 128-sample blocks, as an AudioWorklet does. */
function resampleInBlocks(resampler: Resampler, input: Float32Array, block = 128) {
  const parts: number[] = [];
  for (let i = 0; i < input.length; i += block) parts.push(...resampler.process(input.subarray(i, i + block)));
  return Float32Array.from(parts);
}

function rms(samples: Float32Array, from = 0, to = samples.length) {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i] ** 2;
  return Math.sqrt(sum / (to - from));
}

describe("floatToInt16", () => {
  it("maps [-1, 1] onto the 16-bit range and clips beyond it", () => {
    expect([...floatToInt16(Float32Array.of(0, 1, -1, 0.5, -0.5, 2, -3, NaN))]).toEqual([
      0, 32767, -32768, 16384, -16384, 32767, -32768, 0,
    ]);
  });

  it("writes into a given view", () => {
    const target = new Int16Array(4);
    floatToInt16(Float32Array.of(1, -1), target.subarray(2));
    expect([...target]).toEqual([0, 0, 32767, -32768]);
  });
});

describe("Resampler", () => {
  it.each([48_000, 44_100, 22_050, 8_000])("turns %i Hz into 16 kHz without changing a 1 kHz tone", (rate) => {
    const out = resampleInBlocks(new Resampler(rate, 16_000), sine(1000, rate, 1));
    // One second in, one second out (less the filter's half width still held back).
    expect(out.length).toBeGreaterThan(16_000 - 200);
    expect(out.length).toBeLessThanOrEqual(16_000);
    // Amplitude kept: RMS of a 0.5 sine is 0.354 (away from the start-up edge).
    expect(rms(out, 1000, out.length - 100)).toBeCloseTo(0.5 / Math.SQRT2, 2);
    // Frequency kept: 2 zero crossings per period, 1000 periods per 16000 samples.
    let crossings = 0;
    for (let i = 1001; i < 15_000; i++) if (out[i - 1] < 0 !== out[i] < 0) crossings++;
    expect(crossings / 14_000).toBeCloseTo(2000 / 16_000, 3);
  });

  it("removes what would alias: a 10 kHz tone at 48 kHz is almost gone at 16 kHz", () => {
    const out = resampleInBlocks(new Resampler(48_000, 16_000), sine(10_000, 48_000, 0.5));
    expect(rms(out, 500, out.length - 100)).toBeLessThan(0.01);
  });

  it("gives the same samples whatever the block size", () => {
    const input = sine(440, 44_100, 0.2);
    const a = resampleInBlocks(new Resampler(44_100), input, 128);
    const b = resampleInBlocks(new Resampler(44_100), input, 4096);
    expect(a.length).toBe(b.length);
    for (let i = 0; i < a.length; i++) expect(a[i]).toBeCloseTo(b[i], 6);
  });
});

describe("PcmChunker", () => {
  it("emits exactly 4096-sample Int16 buffers and flushes the shorter rest", () => {
    const buffers: Int16Array[] = [];
    const chunker = new PcmChunker(16_000, (b: Int16Array) => buffers.push(b));
    for (let i = 0; i < 100; i++) chunker.push(new Float32Array(128).fill(0.25));
    expect(buffers.map((b) => b.length)).toEqual([4096, 4096, 4096]);
    expect(buffers[0]).toBeInstanceOf(Int16Array);
    expect(buffers[0][0]).toBe(Math.round(0.25 * 32767));
    chunker.flush();
    expect(buffers.map((b) => b.length)).toEqual([4096, 4096, 4096, 12_800 - 3 * 4096]);
    chunker.flush();
    expect(buffers).toHaveLength(4);
  });

  it("resamples a 48 kHz context to 16 kHz: 256 kbit/s of PCM whatever the device rate", () => {
    let samples = 0;
    const chunker = new PcmChunker(48_000, (b: Int16Array) => (samples += b.length));
    const second = sine(300, 48_000, 1);
    for (let i = 0; i < second.length; i += 128) chunker.push(second.subarray(i, i + 128));
    chunker.flush();
    expect(Math.abs(samples - 16_000)).toBeLessThan(100);
    expect(samples * 16).toBeLessThanOrEqual(256_000);
  });
});
