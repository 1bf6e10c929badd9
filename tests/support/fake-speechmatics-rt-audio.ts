import { readFile } from "node:fs/promises";

import { makeSpeechWav } from "./audio-fixtures";

// Raw PCM for the realtime tests: tone bursts between silences (stretches the fake realtime server hears as
// speech), real German speech from espeak-ng, and the cutting into the frames a client sends.

const RATE = 16_000;

/**
 * 16 kHz PCM of alternating silence and 440 Hz tone, starting with silence: [0.5, 1.5, 1] is 0.5 s silence,
 * 1.5 s tone, 1 s silence. s16le by default, f32le on request (the same signal).
 */
export function toneBursts(seconds: number[], encoding: "pcm_s16le" | "pcm_f32le" = "pcm_s16le"): Buffer {
  const total = seconds.reduce((sum, s) => sum + Math.round(s * RATE), 0);
  const width = encoding === "pcm_f32le" ? 4 : 2;
  const pcm = Buffer.alloc(total * width);
  let at = 0;
  seconds.forEach((length, index) => {
    const count = Math.round(length * RATE);
    for (let i = 0; i < count; i++, at++) {
      const value = index % 2 === 1 ? 0.25 * Math.sin((2 * Math.PI * 440 * i) / RATE) : 0;
      if (width === 4) pcm.writeFloatLE(value, at * 4);
      else pcm.writeInt16LE(Math.round(value * 32767), at * 2);
    }
  });
  return pcm;
}

/** The samples of a PCM WAV (its `data` chunk), wherever the chunk sits. */
export function pcmOfWav(wav: Buffer): Buffer {
  let offset = 12;
  while (offset + 8 <= wav.length) {
    const id = wav.toString("ascii", offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === "data") return Buffer.from(wav.subarray(offset + 8, Math.min(wav.length, offset + 8 + size)));
    offset += 8 + size + (size % 2);
  }
  throw new Error("The WAV has no data chunk");
}

function silence(seconds: number) {
  return Buffer.alloc(Math.round(seconds * RATE) * 2);
}

/**
 * German speech (espeak-ng) of each line, 16 kHz s16le, with `gapSeconds` of silence before, between and
 * after the lines — long enough (≥ 0.35 s) for the fake realtime server to hear one stretch per line.
 */
export async function speechPcm(dir: string, lines: string[], gapSeconds = 1): Promise<Buffer> {
  const parts: Buffer[] = [silence(gapSeconds)];
  for (const line of lines) {
    parts.push(pcmOfWav(await readFile(await makeSpeechWav(dir, line))), silence(gapSeconds));
  }
  return Buffer.concat(parts);
}

/** Cuts PCM into frames of `bytes` (the last may be shorter); 4096 samples of s16le by default. */
export function framesOf(pcm: Buffer, bytes = 8192): Buffer[] {
  const frames: Buffer[] = [];
  for (let offset = 0; offset < pcm.length; offset += bytes) frames.push(pcm.subarray(offset, offset + bytes));
  return frames;
}

/**
 * 16 kHz s16le PCM: `leadSeconds` of silence, then for each amplitude (full scale 1) a 500 Hz tone of
 * `toneSeconds` followed by `gapSeconds` of silence. 500 Hz fills a 20 ms frame with whole periods, so every
 * frame inside a burst has the RMS amplitude/√2 — what the fake's `lineOf` reads to pick the burst's word.
 */
export function levelBursts(amplitudes: number[], { leadSeconds = 0.5, toneSeconds = 0.4, gapSeconds = 1 } = {}) {
  const parts: Buffer[] = [silence(leadSeconds)];
  for (const amplitude of amplitudes) {
    const tone = Buffer.alloc(Math.round(toneSeconds * RATE) * 2);
    for (let i = 0; i < tone.length / 2; i++)
      tone.writeInt16LE(Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * 500 * i) / RATE)), i * 2);
    parts.push(tone, silence(gapSeconds));
  }
  return Buffer.concat(parts);
}
