import { describe, expect, test } from "vitest";
import { createResampler } from "./resample.server";

function sine(rate: number, frequency: number, seconds: number, amplitude = 0.5) {
  const out = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin((2 * Math.PI * frequency * i) / rate);
  return out;
}

/** Resamples `input` fed in chunks of the given sizes (cycled), then flushes. */
function resample(input: Float32Array, from: number, to: number, chunks: number[] = [4096]) {
  const resampler = createResampler(from, to);
  const parts: Float32Array[] = [];
  for (let at = 0, n = 0; at < input.length; n++) {
    const size = chunks[n % chunks.length]!;
    parts.push(resampler.push(input.subarray(at, at + size)));
    at += size;
  }
  parts.push(resampler.flush());
  const out = new Float32Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Least-squares fit of a sine of `frequency` to the middle of `signal` (away from the edges' transients):
 * its amplitude, and the RMS of what the fit leaves — large when the frequency is not the one asked about.
 */
function fit(signal: Float32Array, rate: number, frequency: number) {
  const from = Math.floor(signal.length / 4);
  const to = Math.floor((signal.length * 3) / 4);
  let ss = 0;
  let cc = 0;
  let sc = 0;
  let ys = 0;
  let yc = 0;
  for (let i = from; i < to; i++) {
    const s = Math.sin((2 * Math.PI * frequency * i) / rate);
    const c = Math.cos((2 * Math.PI * frequency * i) / rate);
    ss += s * s;
    cc += c * c;
    sc += s * c;
    ys += signal[i]! * s;
    yc += signal[i]! * c;
  }
  const det = ss * cc - sc * sc;
  const a = (ys * cc - yc * sc) / det;
  const b = (yc * ss - ys * sc) / det;
  let residual = 0;
  for (let i = from; i < to; i++) {
    const e =
      signal[i]! -
      a * Math.sin((2 * Math.PI * frequency * i) / rate) -
      b * Math.cos((2 * Math.PI * frequency * i) / rate);
    residual += e * e;
  }
  return { amplitude: Math.hypot(a, b), residualRms: Math.sqrt(residual / (to - from)) };
}

function rms(signal: Float32Array) {
  let sum = 0;
  for (const x of signal) sum += x * x;
  return Math.sqrt(sum / signal.length);
}

describe("createResampler", () => {
  test("a 1 kHz sine at 44.1 kHz keeps its frequency and amplitude at 16 kHz", () => {
    const out = resample(sine(44_100, 1_000, 2), 44_100, 16_000, [1000, 37, 4096, 1]);
    expect(out.length).toBe(32_000);
    const { amplitude, residualRms } = fit(out, 16_000, 1_000);
    expect(amplitude).toBeCloseTo(0.5, 3);
    // Everything that is not the 1 kHz sine: below -80 dB of it.
    expect(residualRms / (0.5 / Math.SQRT2)).toBeLessThan(1e-4);
  });

  test("a 10 kHz tone, above the new Nyquist frequency, is strongly attenuated (no alias at 6 kHz)", () => {
    const out = resample(sine(44_100, 10_000, 2), 44_100, 16_000);
    const middle = out.subarray(4000, 28_000);
    // At least 70 dB down (naive decimation would leave it at full strength as a 6 kHz alias).
    expect(rms(middle) / (0.5 / Math.SQRT2)).toBeLessThan(10 ** (-70 / 20));
  });

  test("the pass band reaches speech's top: a 6 kHz tone from 48 kHz keeps its amplitude", () => {
    const out = resample(sine(48_000, 6_000, 1), 48_000, 16_000);
    expect(out.length).toBe(16_000);
    expect(fit(out, 16_000, 6_000).amplitude).toBeCloseTo(0.5, 2);
  });

  test("chunk boundaries do not change the output", () => {
    const input = sine(22_050, 440, 0.5);
    const whole = resample(input, 22_050, 16_000, [input.length]);
    const pieces = resample(input, 22_050, 16_000, [1, 2, 3, 500, 7]);
    expect(pieces.length).toBe(whole.length);
    for (let i = 0; i < whole.length; i++) expect(pieces[i]).toBeCloseTo(whole[i]!, 6);
  });

  test("upsampling 8 kHz telephone audio to 16 kHz keeps a 1 kHz tone", () => {
    const out = resample(sine(8_000, 1_000, 1), 8_000, 16_000);
    expect(out.length).toBe(16_000);
    const { amplitude, residualRms } = fit(out, 16_000, 1_000);
    expect(amplitude).toBeCloseTo(0.5, 3);
    expect(residualRms).toBeLessThan(1e-4);
  });

  test("an odd rate (44,057 Hz, 16,000 phases) and a high one (384 kHz) still resample exactly enough", () => {
    for (const rate of [44_057, 384_000]) {
      const out = resample(sine(rate, 1_000, 1), rate, 16_000);
      expect(out.length).toBe(Math.ceil((Math.round(rate) * 16_000) / rate));
      const { amplitude, residualRms } = fit(out, 16_000, 1_000);
      expect(amplitude).toBeCloseTo(0.5, 3);
      expect(residualRms).toBeLessThan(1e-3);
    }
  });

  test("a constant stays that constant; the same rate passes samples through", () => {
    const out = resample(new Float32Array(44_100).fill(0.25), 44_100, 16_000);
    for (const x of out.subarray(100, out.length - 100)) expect(x).toBeCloseTo(0.25, 5);
    const same = createResampler(16_000, 16_000);
    expect(Array.from(same.push(new Float32Array([0.5, -0.5])))).toEqual([0.5, -0.5]);
    expect(same.flush().length).toBe(0);
  });

  test("refuses rates that are not positive whole numbers", () => {
    expect(() => createResampler(0, 16_000)).toThrow(RangeError);
    expect(() => createResampler(44_100.5, 16_000)).toThrow(RangeError);
  });
});
