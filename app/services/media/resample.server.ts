// Band-limited resampling of mono float audio, in plain JavaScript, chunk by chunk: the speech engines hear
// 16 kHz, and what reaches them must not carry the aliases of everything above 8 kHz that naive decimation
// would fold into the speech band. A windowed-sinc (Kaiser) polyphase filter after J. O. Smith's "Digital
// Audio Resampling": one filter per output phase, so each output sample is one dot product.
//
// Cost is proportional to the input, not the ratio: about 2 × ZERO_CROSSINGS / ROLLOFF multiply-adds per
// input sample (~35), whether 8 kHz is doubled or 384 kHz is divided by 24.

/** Zero crossings of the sinc on each side of the centre: the filter's length and so its steepness. */
const ZERO_CROSSINGS = 16;
/** The pass band ends at this fraction of the lower Nyquist frequency (7.36 kHz of 8 kHz). */
const ROLLOFF = 0.92;
/** Kaiser window shape: about 85 dB of stop-band attenuation. */
const KAISER_BETA = 8.5;
/**
 * Phases kept as precomputed filters. The standard rates need few (44.1 kHz → 16 kHz: 160); an odd rate such
 * as 44,057 Hz would need 16,000 — beyond this the output instant is rounded to the nearest of these phases,
 * an error of at most 1/8192 of an input sample (below -75 dB at the top of the speech band).
 */
const MAX_PHASES = 4096;

export type Resampler = {
  /** Feeds input samples; returns the output samples they complete (possibly none). */
  push(input: Float32Array): Float32Array;
  /** Ends the input: returns the last output samples (the filter's tail over silence). */
  flush(): Float32Array;
};

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The zeroth-order modified Bessel function of the first kind (power series), for the Kaiser window. */
function besselI0(x: number) {
  let sum = 1;
  let term = 1;
  const quarter = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= quarter / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

/**
 * The filter bank: `phases` rows of `taps` coefficients; row p is the impulse response sampled at the input
 * samples around an output instant p/phases past an input sample. Each row sums to 1, so silence stays
 * silence and a constant stays the same constant.
 */
function filterBank(cutoff: number, phases: number) {
  const halfWidth = ZERO_CROSSINGS / (2 * cutoff);
  const half = Math.ceil(halfWidth);
  const taps = 2 * half;
  const bank = new Float32Array(phases * taps);
  const norm = besselI0(KAISER_BETA);
  const row = new Float64Array(taps);
  for (let p = 0; p < phases; p++) {
    let sum = 0;
    for (let i = 0; i < taps; i++) {
      // Input sample (i - half + 1) relative to the output instant at p/phases.
      const d = i - half + 1 - p / phases;
      const x = d / halfWidth;
      let value = 0;
      if (Math.abs(x) < 1) {
        const arg = 2 * cutoff * d;
        const sinc = arg === 0 ? 1 : Math.sin(Math.PI * arg) / (Math.PI * arg);
        value = 2 * cutoff * sinc * (besselI0(KAISER_BETA * Math.sqrt(1 - x * x)) / norm);
      }
      row[i] = value;
      sum += value;
    }
    for (let i = 0; i < taps; i++) bank[p * taps + i] = row[i] / sum;
  }
  return { bank, half, taps };
}

/**
 * A streaming resampler from `inputRate` to `outputRate` (whole Hz). Output sample k is the input
 * band-limited to ROLLOFF × the lower Nyquist frequency and read at k × inputRate / outputRate input samples;
 * the output has ceil(n × outputRate / inputRate) samples for n input samples, the first aligned with the
 * first input sample (no delay to trim).
 */
export function createResampler(inputRate: number, outputRate: number): Resampler {
  if (!Number.isInteger(inputRate) || !Number.isInteger(outputRate) || inputRate <= 0 || outputRate <= 0) {
    throw new RangeError(`resampling needs positive whole rates, not ${inputRate} → ${outputRate}`);
  }
  if (inputRate === outputRate) {
    return { push: (input) => input.slice(), flush: () => new Float32Array(0) };
  }
  const common = gcd(inputRate, outputRate);
  // Output k sits at k × step / up input samples: an integer position plus `fraction` / up.
  const up = outputRate / common;
  const step = inputRate / common;
  const phases = Math.min(up, MAX_PHASES);
  const cutoff = (ROLLOFF * Math.min(1, outputRate / inputRate)) / 2;
  const { bank, half, taps } = filterBank(cutoff, phases);

  // Input not yet consumed, starting at absolute input index `bufferStart`. The half-1 zeros in front stand
  // for the silence before the first sample, so the first output is centred on it.
  let buffer = new Float32Array(half - 1);
  let bufferStart = -(half - 1);
  let position = 0;
  let fraction = 0;
  let received = 0;
  let ended = false;

  function run(limit: number) {
    // An output needs the input samples position-half+1 … position+half, and lies before `limit`: the outputs
    // still to come are at position + floor((fraction + j × step) / up), j = 0, 1, …
    const last = Math.min(bufferStart + buffer.length - half - 1, limit - 1);
    const count = Math.max(0, Math.ceil(((last - position + 1) * up - fraction) / step));
    const out = new Float32Array(count);
    // Locals, not the closure's variables, in the hot loop: V8 keeps them in registers.
    const input = buffer;
    const filters = bank;
    const offset = 1 - half - bufferStart;
    for (let k = 0; k < count; k++) {
      const phase = phases === up ? fraction : Math.floor((fraction * phases) / up);
      const row = phase * taps;
      const base = position + offset;
      let acc = 0;
      for (let i = 0; i < taps; i++) acc += input[base + i]! * filters[row + i]!;
      out[k] = acc;
      fraction += step;
      position += Math.floor(fraction / up);
      fraction %= up;
    }
    // Keep only what the next output still needs.
    const drop = Math.min(position - half + 1 - bufferStart, buffer.length);
    if (drop > 0) {
      buffer = buffer.slice(drop);
      bufferStart += drop;
    }
    return out;
  }

  function append(input: Float32Array) {
    const joined = new Float32Array(buffer.length + input.length);
    joined.set(buffer);
    joined.set(input, buffer.length);
    buffer = joined;
  }

  return {
    push(input) {
      if (ended) throw new Error("resampler already flushed");
      received += input.length;
      append(input);
      return run(Number.POSITIVE_INFINITY);
    },
    flush() {
      if (ended) return new Float32Array(0);
      ended = true;
      append(new Float32Array(half + 1));
      // Outputs whose instant lies before the end of the input (k × step / up < received).
      return run(received);
    },
  };
}
