import { open, type FileHandle } from "node:fs/promises";
import { endianness } from "node:os";
import { SpeechEngineError } from "./types";

// Reading the normalised WAV (16 kHz, mono, 16-bit PCM from ffmpeg) for the local engine without ever holding
// the whole recording: a 4-hour recording is 460 MB of 16-bit PCM and would be 920 MB as Float32. The VAD pass
// streams it in chunks; recognition reads back only the stretches the VAD found speech in.

export const SAMPLE_RATE = 16_000;

export type WavInfo = {
  /** Byte offset of the first sample in the file. */
  dataOffset: number;
  /** Number of 16-bit samples (mono: one per frame). */
  samples: number;
  seconds: number;
};

function badAudio(message: string, cause?: unknown) {
  return new SpeechEngineError("permanent", `The normalised audio is not usable: ${message}`, { cause });
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/**
 * Walks the RIFF chunks for `fmt ` and `data`. Accepts only what the normaliser makes: PCM (or
 * WAVE_FORMAT_EXTENSIBLE with the PCM sub-format), 1 channel, 16 000 Hz, 16 bits. A data chunk whose size is
 * unset (0 or 0xFFFFFFFF, as ffmpeg writes when it cannot seek back) or larger than the file runs to the end
 * of the file.
 */
export async function readWavInfo(file: string): Promise<WavInfo> {
  let handle: FileHandle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    throw badAudio(`cannot open ${file}`, error);
  }
  try {
    const { size } = await handle.stat();
    const head = await readAt(handle, 0, 12);
    if (head.length < 12 || head.toString("latin1", 0, 4) !== "RIFF" || head.toString("latin1", 8, 12) !== "WAVE")
      throw badAudio("not a RIFF/WAVE file");
    let position = 12;
    let format: { tag: number; channels: number; rate: number; bits: number } | undefined;
    while (position + 8 <= size) {
      const chunk = await readAt(handle, position, 8);
      const id = chunk.toString("latin1", 0, 4);
      const length = chunk.readUInt32LE(4);
      const body = position + 8;
      if (id === "fmt ") {
        const fmt = await readAt(handle, body, Math.min(length, 40));
        if (fmt.length < 16) throw badAudio("truncated fmt chunk");
        let tag = fmt.readUInt16LE(0);
        if (tag === WAVE_FORMAT_EXTENSIBLE && fmt.length >= 26) tag = fmt.readUInt16LE(24);
        format = { tag, channels: fmt.readUInt16LE(2), rate: fmt.readUInt32LE(4), bits: fmt.readUInt16LE(14) };
      } else if (id === "data") {
        if (!format) throw badAudio("data chunk before fmt chunk");
        if (
          format.tag !== WAVE_FORMAT_PCM ||
          format.channels !== 1 ||
          format.rate !== SAMPLE_RATE ||
          format.bits !== 16
        )
          throw badAudio(
            `expected 16 kHz mono 16-bit PCM, got format ${format.tag}, ${format.channels} channel(s), ${format.rate} Hz, ${format.bits} bits`,
          );
        const available = size - body;
        const bytes = length === 0 || length === 0xffffffff || length > available ? available : length;
        const samples = Math.floor(bytes / 2);
        return { dataOffset: body, samples, seconds: samples / SAMPLE_RATE };
      }
      position = body + length + (length % 2);
    }
    throw badAudio("no data chunk");
  } finally {
    await handle.close();
  }
}

const LITTLE_ENDIAN = endianness() === "LE";

function toFloat(bytes: Buffer, into: Float32Array, at = 0) {
  const count = Math.floor(bytes.length / 2);
  if (LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
    const pcm = new Int16Array(bytes.buffer, bytes.byteOffset, count);
    for (let i = 0; i < count; i++) into[at + i] = pcm[i] / 32768;
  } else {
    for (let i = 0; i < count; i++) into[at + i] = bytes.readInt16LE(i * 2) / 32768;
  }
  return count;
}

/**
 * The samples of the whole file, `chunkSamples` at a time, as Float32 in [-1, 1). Each chunk is a fresh
 * array; the caller keeps none of them for long.
 */
export async function* readSampleChunks(
  file: string,
  info: WavInfo,
  chunkSamples: number,
): AsyncGenerator<{ start: number; samples: Float32Array }> {
  const handle = await open(file, "r");
  try {
    for (let start = 0; start < info.samples; start += chunkSamples) {
      const count = Math.min(chunkSamples, info.samples - start);
      const bytes = await readAt(handle, info.dataOffset + start * 2, count * 2);
      const samples = new Float32Array(Math.floor(bytes.length / 2));
      toFloat(bytes, samples);
      yield { start, samples };
      if (bytes.length < count * 2) return;
    }
  } finally {
    await handle.close();
  }
}

export type SampleRange = { start: number; end: number };

/**
 * Several ranges of the file (sample indices, end exclusive) one after the other in one Float32Array, with
 * `gapSamples` of silence between them.
 */
export async function readSampleRanges(
  file: string,
  info: WavInfo,
  ranges: SampleRange[],
  gapSamples = 0,
): Promise<Float32Array> {
  const total = ranges.reduce((sum, r) => sum + (r.end - r.start), 0) + gapSamples * Math.max(0, ranges.length - 1);
  const out = new Float32Array(total);
  const handle = await open(file, "r");
  try {
    let at = 0;
    for (const [index, range] of ranges.entries()) {
      if (index > 0) at += gapSamples;
      const bytes = await readAt(handle, info.dataOffset + range.start * 2, (range.end - range.start) * 2);
      toFloat(bytes, out, at);
      at += range.end - range.start;
    }
  } finally {
    await handle.close();
  }
  return out;
}

/** The whole recording as Float32: 4 bytes a sample (about 920 MB for 4 hours). Only diarization needs it. */
export async function readAllSamples(file: string, info: WavInfo): Promise<Float32Array> {
  return readSampleRanges(file, info, [{ start: 0, end: info.samples }]);
}
