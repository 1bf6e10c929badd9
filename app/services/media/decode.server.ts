import { open } from "node:fs/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import { openFileWindow, type FileWindow } from "./file-window.server";
import { declaredDuration, findMp3Stream } from "./mp3-frames.server";
import { checkMp3Decoder, mp3MonoBlocks } from "./mp3.server";
import { MediaProbeError } from "./probe-error.server";
import { createResampler, type Resampler } from "./resample.server";
import { readWavLayout, wavMonoBlocks } from "./wav.server";

// Uploaded audio, probed and decoded inside this process — WAV in JavaScript (media-wav), MP3 in WebAssembly
// (media-mp3) — and resampled in JavaScript (media-resample) to the 16 kHz mono 16-bit WAV every speech engine
// gets. No upload reaches a native decoder, and nothing needs ffmpeg at run time. Decoding goes block by block,
// and the WAV is written to disk as it comes: a 4-hour recording is never in memory, and decoding stops a
// little past the duration cap.

export type AudioFormat = "mp3" | "wav";

export type ProbeResult = {
  format: AudioFormat;
  durationSeconds: number;
  sampleRate: number | null;
  channels: number | null;
  codec: string;
};

/**
 * The sample rates a recording may have: telephone speech (8 kHz, also MP3's lowest) up to 384 kHz. A WAV header
 * may claim any rate; at 4 Hz, 64 KB "last" over two hours and would be resampled into ~256 MB of PCM.
 */
export const SAMPLE_RATE_RANGE = { min: 8_000, max: 384_000 } as const;
export const SPEECH_SAMPLE_RATE = 16_000;
/** What the health check says the conversion runs on. */
export const DECODER_DESCRIPTION = "in-process (WebAssembly): MP3 by mpg123-decoder, WAV and resampling in JavaScript";

/** Seconds of audio the probe decodes to prove the bytes are audio and not just a plausible header. */
const DECODE_CHECK_SECONDS = 30;
const WAV_HEADER_BYTES = 44;
const WRITE_BUFFER_BYTES = 256 * 1024;

/** Throws when the in-process decoder cannot work here: the MP3 decoder starts, the resampler filters. */
export async function checkDecoder() {
  await checkMp3Decoder();
  const resampler = createResampler(44_100, SPEECH_SAMPLE_RATE);
  const out = resampler.push(new Float32Array(4_410).fill(0.5));
  if (!(Math.abs(out[out.length >> 1]! - 0.5) < 1e-3)) throw new Error("the resampler does not keep a constant");
}

async function withFile<T>(path: string, action: (file: FileWindow) => Promise<T>) {
  const file = await openFileWindow(path);
  try {
    return await action(file);
  } finally {
    await file.close();
  }
}

async function probeMp3(file: FileWindow): Promise<ProbeResult> {
  const stream = await findMp3Stream(file);
  if (!stream) throw new MediaProbeError("failed", "MP3: no MPEG layer III frame");
  const { first } = stream;
  // As ffprobe's frame count did: real audio decodes (nearly) every frame, noise behind headers does not.
  let frames = 0;
  let errors = 0;
  let samples = 0;
  const maxFrames = Math.ceil((DECODE_CHECK_SECONDS * first.sampleRate) / first.samplesPerFrame);
  for await (const block of mp3MonoBlocks(file, stream, { maxFrames })) {
    frames += block.frames;
    errors += block.errors;
    samples += block.samples.length;
  }
  if (samples === 0 || errors * 2 > frames) {
    throw new MediaProbeError("not_audio", `MP3: ${errors} of ${frames} frames did not decode`);
  }
  return {
    format: "mp3",
    durationSeconds: declaredDuration(stream),
    sampleRate: first.sampleRate,
    channels: first.channels,
    codec: "mp3",
  };
}

async function probeWav(file: FileWindow): Promise<ProbeResult> {
  const layout = await readWavLayout(file);
  return {
    format: "wav",
    durationSeconds: layout.frames / layout.sampleRate,
    sampleRate: layout.sampleRate,
    channels: layout.channels,
    codec: layout.codec,
  };
}

/**
 * Probes an upload as the container its magic bytes named: the length (for an MP3 the one its Xing/Info/VBRI
 * header declares, or its bytes at its bitrate — the decoded length is measured by `decodeToSpeechWav`), the
 * rate, the channels and the codec. An MP3's first 30 s are decoded to prove they are audio. Throws
 * `MediaProbeError`: "failed" when the container cannot be read, "not_audio" when it holds no usable audio,
 * "unavailable" when the decoder cannot start.
 */
export function probeAudioFile(path: string, format: AudioFormat): Promise<ProbeResult> {
  return withFile(path, (file) => (format === "mp3" ? probeMp3(file) : probeWav(file)));
}

/** Mono blocks at their own rate, from whichever decoder the format needs. */
async function* monoBlocks(file: FileWindow, format: AudioFormat) {
  if (format === "wav") {
    const layout = await readWavLayout(file);
    checkRate(layout.sampleRate);
    for await (const samples of wavMonoBlocks(file, layout)) yield { sampleRate: layout.sampleRate, samples };
    return;
  }
  const stream = await findMp3Stream(file);
  if (!stream) throw new MediaProbeError("failed", "MP3: no MPEG layer III frame");
  yield* mp3MonoBlocks(file, stream);
}

function checkRate(rate: number) {
  if (rate < SAMPLE_RATE_RANGE.min || rate > SAMPLE_RATE_RANGE.max) {
    throw new MediaProbeError("not_audio", `sample rate ${rate} Hz is outside the accepted range`);
  }
}

/** A 16 kHz mono 16-bit PCM WAV written as samples arrive; the sizes in its header are set when it is closed. */
async function openSpeechWav(path: string) {
  const handle = await open(path, "w");
  const pending = Buffer.alloc(WRITE_BUFFER_BYTES);
  const view = new DataView(pending.buffer, pending.byteOffset, pending.length);
  let used = 0;
  let position = WAV_HEADER_BYTES;
  let samples = 0;

  async function drain() {
    if (used === 0) return;
    await handle.write(pending, 0, used, position);
    position += used;
    used = 0;
  }

  return {
    get samples() {
      return samples;
    },
    async write(block: Float32Array) {
      for (let i = 0; i < block.length; i++) {
        const value = Math.round(block[i]! * 32768);
        view.setInt16(used, value > 32767 ? 32767 : value < -32768 ? -32768 : value, true);
        used += 2;
        if (used === WRITE_BUFFER_BYTES) await drain();
      }
      samples += block.length;
    },
    async close() {
      try {
        await drain();
        const header = speechWavHeader(samples * 2);
        await handle.write(header, 0, WAV_HEADER_BYTES, 0);
      } finally {
        await handle.close();
      }
    },
  };
}

/** The 44-byte header of a 16 kHz mono 16-bit PCM WAV whose data has `bytes` bytes. */
export function speechWavHeader(bytes: number) {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write("RIFF", 0, "latin1");
  header.writeUInt32LE(36 + bytes, 4);
  header.write("WAVEfmt ", 8, "latin1");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(SPEECH_SAMPLE_RATE, 24);
  header.writeUInt32LE(SPEECH_SAMPLE_RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "latin1");
  header.writeUInt32LE(bytes, 40);
  return header;
}

/**
 * Decodes `input` (an upload that passed `validateAudioFile`, of the given format) into `output`, a 16 kHz mono
 * 16-bit PCM WAV, block by block. At most `maxSamples` samples are written: `complete` is false when there was
 * more audio than that (decoding stopped there). `deadline` (epoch ms) bounds the time spent; between blocks the
 * event loop gets its turn, so the server keeps answering while an hour of audio is converted. Throws
 * `MediaProbeError` ("failed"/"not_audio" for audio that cannot be decoded, "timeout", "unavailable").
 */
export async function decodeToSpeechWav(args: {
  input: string;
  output: string;
  format: AudioFormat;
  maxSamples: number;
  deadline?: number;
}): Promise<{ samples: number; complete: boolean }> {
  return withFile(args.input, async (file) => {
    const wav = await openSpeechWav(args.output);
    try {
      let resampler: Resampler | null = null;
      let rate = 0;
      // Writes what fits under the cap; false once the cap is reached and there was more.
      const take = async (block: Float32Array) => {
        const room = args.maxSamples - wav.samples;
        await wav.write(block.length > room ? block.subarray(0, room) : block);
        return block.length <= room;
      };
      for await (const block of monoBlocks(file, args.format)) {
        if (block.sampleRate !== rate) {
          checkRate(block.sampleRate);
          if (resampler && !(await take(resampler.flush()))) return { samples: wav.samples, complete: false };
          resampler = createResampler(block.sampleRate, SPEECH_SAMPLE_RATE);
          rate = block.sampleRate;
        }
        if (!(await take(resampler!.push(block.samples)))) return { samples: wav.samples, complete: false };
        if (args.deadline !== undefined && Date.now() > args.deadline) {
          throw new MediaProbeError("timeout", "audio conversion ran out of time");
        }
        await nextTurn();
      }
      if (resampler && !(await take(resampler.flush()))) return { samples: wav.samples, complete: false };
      if (wav.samples === 0) throw new MediaProbeError("not_audio", "no audio decoded");
      return { samples: wav.samples, complete: true };
    } finally {
      await wav.close();
    }
  });
}
