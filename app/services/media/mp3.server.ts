import { MPEGDecoder, type MPEGDecodedAudio } from "mpg123-decoder";
import type { FileWindow } from "./file-window.server";
import { mp3Frames, type Mp3Stream } from "./mp3-frames.server";
import { MediaProbeError } from "./probe-error.server";

// MP3 decoded in WebAssembly: libmpg123 compiled to WASM (the npm package mpg123-decoder, of
// wasm-audio-decoders), fed the frames media/mp3-frames.server.ts found, a batch at a time, so a recording of
// hours is never held whole — only one batch of frames and its samples. A corrupt frame costs its own
// samples; whatever mpg123 does with hostile bytes happens inside the WASM sandbox, not in native code.

/** Frames per call into the decoder: about 0.75 s at 44.1 kHz, a few hundred KB of samples at most. */
const FRAMES_PER_BATCH = 32;

export type Mp3Block = {
  sampleRate: number;
  /** The channels' mean. */
  samples: Float32Array;
  /** Frames fed to the decoder for this block. */
  frames: number;
  /** Frames the decoder reported as broken. */
  errors: number;
};

async function startDecoder() {
  try {
    const decoder = new MPEGDecoder();
    await decoder.ready;
    return decoder;
  } catch (error) {
    throw new MediaProbeError("unavailable", `the MP3 decoder could not start: ${(error as Error).message}`);
  }
}

/** Starts and frees a decoder: whether the WebAssembly module loads here at all (the health check). */
export async function checkMp3Decoder() {
  (await startDecoder()).free();
}

/**
 * One call into the decoder. The package reports every broken frame with console.error as well as in its
 * answer; a hostile file could fill the log with them, so console.error is silenced for the length of this
 * synchronous call (nothing else can run meanwhile) and the errors are counted from the answer instead.
 */
function decodeQuietly(decoder: MPEGDecoder, bytes: Uint8Array): MPEGDecodedAudio {
  const log = console.error;
  console.error = () => undefined;
  try {
    return decoder.decode(bytes);
  } finally {
    console.error = log;
  }
}

function mixDown(channels: Float32Array[], length: number) {
  if (channels.length === 1) return channels[0]!.subarray(0, length);
  const out = new Float32Array(length);
  for (const channel of channels) for (let i = 0; i < length; i++) out[i]! += channel[i]!;
  for (let i = 0; i < length; i++) out[i]! /= channels.length;
  return out;
}

/**
 * The stream's audio as mono blocks, batch by batch, ending after `maxFrames` frames when given (the probe
 * decodes only the first seconds). The decoder's memory is freed when the loop ends, however it ends.
 */
export async function* mp3MonoBlocks(
  file: FileWindow,
  stream: Mp3Stream,
  options: { maxFrames?: number } = {},
): AsyncGenerator<Mp3Block> {
  const decoder = await startDecoder();
  try {
    const maxFrames = options.maxFrames ?? Number.POSITIVE_INFINITY;
    let batch: Buffer[] = [];
    let fed = 0;
    const decode = (): Mp3Block => {
      const decoded = decodeQuietly(decoder, Buffer.concat(batch));
      const block = {
        sampleRate: decoded.sampleRate || stream.first.sampleRate,
        samples: mixDown(decoded.channelData, decoded.samplesDecoded),
        frames: batch.length,
        errors: decoded.errors.length,
      };
      batch = [];
      return block;
    };
    for await (const frame of mp3Frames(file, stream)) {
      batch.push(frame.bytes);
      fed += 1;
      if (batch.length === FRAMES_PER_BATCH) yield decode();
      if (fed >= maxFrames) break;
    }
    if (batch.length > 0) yield decode();
  } finally {
    decoder.free();
  }
}
