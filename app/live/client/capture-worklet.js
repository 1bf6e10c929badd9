/* global registerProcessor, AudioWorkletProcessor, sampleRate */
// The microphone's audio, as the live endpoint wants it (app/live/protocol.ts): 16 kHz mono, 16-bit PCM
// (half the bytes of the spec's 32-bit float on slow uplinks, issue 7), in 4096-sample buffers. Runs as an
// AudioWorklet module (loaded from /live/capture-worklet.js); capture.ts imports the same classes for the
// ScriptProcessorNode fallback, and the unit tests import them in Node — one implementation for all three.

const TARGET_RATE = 16000;
const BUFFER_SAMPLES = 4096;
const RESOLUTION = 512;

/** Float samples in [-1, 1] to 16-bit integers; out-of-range values clip instead of wrapping round. */
export function floatToInt16(input, output = new Int16Array(input.length)) {
  for (let i = 0; i < input.length; i++) {
    const s = input[i] > 1 ? 1 : input[i] < -1 ? -1 : input[i] || 0;
    output[i] = s < 0 ? Math.round(s * 0x8000) : Math.round(s * 0x7fff);
  }
  return output;
}

/**
 * Streaming sample-rate conversion by windowed-sinc interpolation. Low-passes below the lower Nyquist
 * frequency first, so 44.1/48 kHz speech does not alias into the 16 kHz band (sibilants would otherwise
 * come back as hiss). Works block by block: it keeps the few input samples the next output still needs.
 */
export class Resampler {
  constructor(inRate, outRate = TARGET_RATE, zeroCrossings = 8) {
    this.step = inRate / outRate;
    // Cut-off in cycles per input sample, a little below the lower Nyquist frequency.
    const cutoff = (0.45 * Math.min(inRate, outRate)) / inRate;
    this.half = Math.ceil(zeroCrossings / (2 * cutoff));
    // The kernel tabulated at 1/RESOLUTION of a sample: sin and cos per tap would cost a few per cent of
    // a core in the audio thread.
    this.table = new Float32Array(this.half * RESOLUTION + 2);
    for (let i = 0; i < this.table.length; i++) {
      const x = i / RESOLUTION;
      const window = x >= this.half ? 0 : 0.5 + 0.5 * Math.cos((Math.PI * x) / this.half); // Hann
      this.table[i] = x === 0 ? 2 * cutoff : (Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x)) * window;
    }
    this.history = null;
    // Position of the next output sample within `history`, in input samples.
    this.position = 0;
  }

  kernel(x) {
    const at = Math.abs(x) * RESOLUTION;
    const i = Math.floor(at);
    if (i + 1 >= this.table.length) return 0;
    return this.table[i] + (this.table[i + 1] - this.table[i]) * (at - i);
  }

  /** Feeds a block of input; returns the output samples it completes (possibly none). */
  process(input) {
    if (!this.history) {
      // Start with `half` samples of silence, so the first output sits on the first input sample.
      this.history = new Float32Array(this.half);
      this.position = this.half;
    }
    const joined = new Float32Array(this.history.length + input.length);
    joined.set(this.history);
    joined.set(input, this.history.length);
    const out = [];
    while (Math.floor(this.position) + this.half < joined.length) {
      const centre = Math.floor(this.position);
      const frac = this.position - centre;
      let sum = 0;
      for (let k = centre - this.half + 1; k <= centre + this.half; k++)
        sum += joined[k] * this.kernel(k - centre - frac);
      out.push(sum);
      this.position += this.step;
    }
    // Keep what the next outputs still reach back to.
    const keepFrom = Math.max(0, Math.floor(this.position) - this.half + 1);
    this.history = joined.slice(keepFrom);
    this.position -= keepFrom;
    return Float32Array.from(out);
  }
}

/**
 * Collects 16 kHz float samples into Int16 buffers of exactly 4096 samples; `flush` hands over the shorter
 * rest when capture stops (only the last buffer may be shorter, as the protocol requires).
 */
export class PcmChunker {
  constructor(inRate, emit) {
    this.resampler = inRate === TARGET_RATE ? null : new Resampler(inRate, TARGET_RATE);
    this.emit = emit;
    this.buffer = new Int16Array(BUFFER_SAMPLES);
    this.filled = 0;
  }

  push(samples) {
    const input = this.resampler ? this.resampler.process(samples) : samples;
    let offset = 0;
    while (offset < input.length) {
      const n = Math.min(BUFFER_SAMPLES - this.filled, input.length - offset);
      floatToInt16(input.subarray(offset, offset + n), this.buffer.subarray(this.filled, this.filled + n));
      this.filled += n;
      offset += n;
      if (this.filled === BUFFER_SAMPLES) {
        this.emit(this.buffer);
        this.buffer = new Int16Array(BUFFER_SAMPLES);
        this.filled = 0;
      }
    }
  }

  flush() {
    if (this.filled > 0) this.emit(this.buffer.slice(0, this.filled));
    this.buffer = new Int16Array(BUFFER_SAMPLES);
    this.filled = 0;
  }
}

if (typeof registerProcessor === "function") {
  registerProcessor(
    "skribent-capture",
    class extends AudioWorkletProcessor {
      constructor() {
        super();
        this.stopped = false;
        this.chunker = new PcmChunker(sampleRate, (buffer) => this.port.postMessage(buffer, [buffer.buffer]));
        this.port.onmessage = (event) => {
          if (event.data !== "flush") return;
          this.chunker.flush();
          this.stopped = true;
          this.port.postMessage("flushed");
        };
      }

      process(inputs) {
        if (this.stopped) return false;
        // Mono: the first channel of the first input (the track was asked for one channel).
        const channel = inputs[0] && inputs[0][0];
        if (channel) this.chunker.push(channel);
        return true;
      }
    },
  );
}
