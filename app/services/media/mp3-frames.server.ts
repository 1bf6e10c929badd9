import type { FileWindow } from "./file-window.server";

// MPEG audio layer III frames, found in JavaScript before any decoder sees a byte: the ID3v2 tags in front are
// skipped, a frame counts only when the next one follows where its header says (or the file ends there), and
// junk between frames is skipped by the same rule. So the decoder (media/mp3.server.ts) is fed frames of one
// stream only — never a PDF's bytes behind a plausible header, never layer I/II, never a change of rate.
//
// The first frame also answers the probe: rate, channels, and the length a Xing/Info or VBRI header declares
// (as ffprobe reported it), or else the length the first frame's bitrate gives the file (constant bitrate).

export type FrameHeader = {
  /** 1 (MPEG-1), 2 (MPEG-2) or 2.5 (MPEG-2.5). */
  version: 1 | 2 | 2.5;
  sampleRate: number;
  /** kbit/s */
  bitrate: number;
  channels: 1 | 2;
  samplesPerFrame: 1152 | 576;
  /** Bytes, header included. */
  length: number;
};

const BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES = { 1: [44_100, 48_000, 32_000], 2: [22_050, 24_000, 16_000], 2.5: [11_025, 12_000, 8_000] };

/** How far past the ID3v2 tags the first frame is looked for (ffmpeg looks about as far). */
export const FIRST_FRAME_SEARCH_BYTES = 64 * 1024;
const SCAN_BYTES = 64 * 1024;

/**
 * A layer III frame header at `at`, or null: frame sync, a version other than "reserved", layer III, a
 * bitrate other than "free" (0) or "bad" (15), a sample rate other than "reserved".
 */
export function parseFrameHeader(bytes: Uint8Array, at = 0): FrameHeader | null {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return null;
  const b1 = bytes[at + 1]!;
  const b2 = bytes[at + 2]!;
  const versionBits = (b1 >> 3) & 0b11;
  if (versionBits === 0b01 || ((b1 >> 1) & 0b11) !== 0b01) return null;
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 0b11;
  if (bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const version = versionBits === 0b11 ? 1 : versionBits === 0b10 ? 2 : 2.5;
  const sampleRate = SAMPLE_RATES[version][rateIndex]!;
  const bitrate = (version === 1 ? BITRATES_V1 : BITRATES_V2)[bitrateIndex]!;
  const padding = (b2 >> 1) & 1;
  const samplesPerFrame = version === 1 ? 1152 : 576;
  const length = Math.floor(((samplesPerFrame / 8) * bitrate * 1000) / sampleRate) + padding;
  const channels = bytes[at + 3]! >> 6 === 0b11 ? 1 : 2;
  return { version, sampleRate, bitrate, channels, samplesPerFrame, length };
}

/** Frames of one stream: the same MPEG version and sample rate (a change would be another stream). */
function sameStream(a: FrameHeader, b: FrameHeader) {
  return a.version === b.version && a.sampleRate === b.sampleRate;
}

/** Where the audio starts: past any ID3v2 tags (several may follow one another). */
export async function skipId3v2(file: FileWindow): Promise<number> {
  let offset = 0;
  for (;;) {
    const tag = await file.read(offset, 10);
    if (tag.length < 10 || tag.toString("latin1", 0, 3) !== "ID3" || tag[3]! < 2 || tag[3]! > 4) return offset;
    if ((tag[6]! | tag[7]! | tag[8]! | tag[9]!) & 0x80) return offset;
    const size = (tag[6]! << 21) | (tag[7]! << 14) | (tag[8]! << 7) | tag[9]!;
    const footer = tag[5]! & 0x10 ? 10 : 0;
    offset += 10 + size + footer;
  }
}

/** The end of the audio: before an ID3v1 tag ("TAG", the last 128 bytes) if there is one. */
async function audioEnd(file: FileWindow) {
  if (file.size < 128) return file.size;
  const tail = await file.read(file.size - 128, 3);
  return tail.toString("latin1") === "TAG" ? file.size - 128 : file.size;
}

/**
 * A frame at `offset` that is confirmed by its successor: the next frame header of the same stream where this
 * one ends, or the end of the audio exactly there.
 */
async function confirmed(file: FileWindow, offset: number, header: FrameHeader, end: number) {
  const next = offset + header.length;
  if (next === end) return true;
  if (next > end) return false;
  const following = parseFrameHeader(await file.read(next, 4));
  return following !== null && sameStream(following, header);
}

/** The first confirmed frame at or after `from` and before `until` (of `stream`, when given). */
async function findFrame(
  file: FileWindow,
  from: number,
  until: number,
  end: number,
  stream?: FrameHeader,
): Promise<{ offset: number; header: FrameHeader } | null> {
  for (let start = from; start < until; start += SCAN_BYTES) {
    const chunk = await file.read(start, SCAN_BYTES + 3);
    for (let i = chunk.indexOf(0xff); i >= 0 && start + i < until; i = chunk.indexOf(0xff, i + 1)) {
      const header = parseFrameHeader(chunk, i);
      if (!header || (stream && !sameStream(header, stream))) continue;
      if (await confirmed(file, start + i, header, end)) return { offset: start + i, header };
    }
  }
  return null;
}

export type Mp3Stream = {
  /** Offset of the first confirmed frame. */
  offset: number;
  first: FrameHeader;
  /** Where the audio ends (before an ID3v1 tag). */
  end: number;
  /** Frames the Xing/Info or VBRI header in the first frame declares, if any. */
  declaredFrames: number | null;
};

/** The frame count a Xing/Info header (after the side information) or a VBRI header (at 36) declares. */
function declaredFrameCount(frame: Buffer, header: FrameHeader) {
  const sideInfo = header.version === 1 ? (header.channels === 1 ? 17 : 32) : header.channels === 1 ? 9 : 17;
  const xing = 4 + sideInfo;
  const tag = frame.toString("latin1", xing, xing + 4);
  if ((tag === "Xing" || tag === "Info") && frame.length >= xing + 12 && frame.readUInt32BE(xing + 4) & 1) {
    return frame.readUInt32BE(xing + 8);
  }
  if (frame.toString("latin1", 36, 40) === "VBRI" && frame.length >= 36 + 18) return frame.readUInt32BE(36 + 14);
  return null;
}

/** The stream's first confirmed frame, looked for within FIRST_FRAME_SEARCH_BYTES after the tags; null if none. */
export async function findMp3Stream(file: FileWindow): Promise<Mp3Stream | null> {
  const start = await skipId3v2(file);
  const end = await audioEnd(file);
  const found = await findFrame(file, start, Math.min(end, start + FIRST_FRAME_SEARCH_BYTES), end);
  if (!found) return null;
  const frame = await file.read(found.offset, found.header.length);
  return { offset: found.offset, first: found.header, end, declaredFrames: declaredFrameCount(frame, found.header) };
}

/**
 * The declared length in seconds, as ffprobe gave it: the Xing/Info/VBRI frame count if there is one,
 * otherwise the audio's bytes at the first frame's bitrate.
 */
export function declaredDuration(stream: Mp3Stream) {
  const { first, declaredFrames } = stream;
  if (declaredFrames !== null && declaredFrames > 0) return (declaredFrames * first.samplesPerFrame) / first.sampleRate;
  return ((stream.end - stream.offset) * 8) / (first.bitrate * 1000);
}

/**
 * The frames of the stream in order, each as its own bytes, skipping junk between them (resynchronising on the
 * next confirmed frame of the same stream). A last frame cut off by the end of the file is dropped.
 */
export async function* mp3Frames(file: FileWindow, stream: Mp3Stream) {
  let offset = stream.offset;
  while (offset + 4 <= stream.end) {
    const header = parseFrameHeader(await file.read(offset, 4));
    if (header && sameStream(header, stream.first)) {
      if (offset + header.length > stream.end) return;
      yield { offset, header, bytes: await file.read(offset, header.length) };
      offset += header.length;
      continue;
    }
    const next = await findFrame(file, offset + 1, stream.end, stream.end, stream.first);
    if (!next) return;
    offset = next.offset;
  }
}
