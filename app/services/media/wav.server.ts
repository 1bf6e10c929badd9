import type { FileWindow } from "./file-window.server";
import { MediaProbeError } from "./probe-error.server";

// WAV, parsed in JavaScript: the RIFF (or big-endian RIFX) chunks, the `fmt ` of the encodings a practice's
// recorders and telephone systems write — integer PCM of 8 to 32 bits, 32/64-bit float, G.711 A-law and µ-law,
// each also inside WAVE_FORMAT_EXTENSIBLE — and the `data` chunk, read block by block and mixed down to mono.
// Everything else (ADPCM, GSM, MPEG in WAV…) is refused as not usable audio.
//
// A header can claim anything: the data chunk's size is cut to what the file holds (a 4 GiB claim over 2 s of
// tone is 2 s), and the rate is checked by the callers against SAMPLE_RATE_RANGE.

export type WavEncoding = "unsigned" | "signed" | "float" | "alaw" | "mulaw";

export type WavLayout = {
  littleEndian: boolean;
  encoding: WavEncoding;
  bytesPerSample: 1 | 2 | 3 | 4 | 8;
  channels: number;
  sampleRate: number;
  /** Bytes of one sample of every channel. */
  frameBytes: number;
  /** Where the samples start in the file. */
  dataOffset: number;
  /** Whole frames of audio the file really holds (the header's claim cut to the file). */
  frames: number;
  /** ffprobe's name for the codec ("pcm_s16le"…), as the probe has always reported it. */
  codec: string;
};

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_IEEE_FLOAT = 0x0003;
const WAVE_FORMAT_ALAW = 0x0006;
const WAVE_FORMAT_MULAW = 0x0007;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
// The rest of the sub-format GUID every standard WAVE_FORMAT_EXTENSIBLE carries after its 16-bit tag.
const KSDATAFORMAT_SUFFIX = Buffer.from([
  0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71,
]);
/** More than any recorder writes (WAVE_FORMAT_EXTENSIBLE names 18 speaker positions). */
const MAX_CHANNELS = 64;
/** Chunks walked before `data`: real files have a handful; thousands of tiny ones are only a way to stall. */
const MAX_CHUNKS = 4096;

const failed = (message: string) => new MediaProbeError("failed", `WAV: ${message}`);
const notAudio = (message: string) => new MediaProbeError("not_audio", `WAV: ${message}`);

type Format = Pick<WavLayout, "encoding" | "bytesPerSample" | "channels" | "sampleRate" | "codec">;

function readFormat(fmt: Buffer, littleEndian: boolean): Format {
  const u16 = (at: number) => (littleEndian ? fmt.readUInt16LE(at) : fmt.readUInt16BE(at));
  const u32 = (at: number) => (littleEndian ? fmt.readUInt32LE(at) : fmt.readUInt32BE(at));
  let tag = u16(0);
  const channels = u16(2);
  const sampleRate = u32(4);
  const bits = u16(14);
  if (tag === WAVE_FORMAT_EXTENSIBLE) {
    if (fmt.length < 40) throw failed("WAVE_FORMAT_EXTENSIBLE without its extension");
    if (!fmt.subarray(26, 40).equals(KSDATAFORMAT_SUFFIX)) throw notAudio("unknown sub-format");
    tag = u16(24);
  }
  if (channels === 0) throw failed("no channels");
  if (channels > MAX_CHANNELS) throw notAudio(`${channels} channels`);
  if (sampleRate === 0) throw failed("sample rate 0");
  const endian = littleEndian ? "le" : "be";
  if (tag === WAVE_FORMAT_PCM) {
    // As ffmpeg does, an odd width (12, 20 bits) is read as the whole bytes it is stored in.
    const bytes = Math.ceil(bits / 8);
    if (bytes === 1) return { encoding: "unsigned", bytesPerSample: 1, channels, sampleRate, codec: "pcm_u8" };
    if (bytes === 2 || bytes === 3 || bytes === 4) {
      return { encoding: "signed", bytesPerSample: bytes, channels, sampleRate, codec: `pcm_s${bytes * 8}${endian}` };
    }
    throw notAudio(`${bits}-bit integer PCM`);
  }
  if (tag === WAVE_FORMAT_IEEE_FLOAT && (bits === 32 || bits === 64)) {
    return {
      encoding: "float",
      bytesPerSample: bits === 64 ? 8 : 4,
      channels,
      sampleRate,
      codec: `pcm_f${bits}${endian}`,
    };
  }
  if (tag === WAVE_FORMAT_ALAW || tag === WAVE_FORMAT_MULAW) {
    if (bits !== 8) throw notAudio(`${bits}-bit G.711`);
    const encoding = tag === WAVE_FORMAT_ALAW ? "alaw" : "mulaw";
    return { encoding, bytesPerSample: 1, channels, sampleRate, codec: `pcm_${encoding}` };
  }
  throw notAudio(`format 0x${tag.toString(16).padStart(4, "0")}, ${bits} bits`);
}

/**
 * Walks the chunks of a RIFF/RIFX WAVE file to its `fmt ` and `data`. Throws `MediaProbeError` — "failed"
 * for a header that cannot be read (not RIFF/RIFX WAVE, a `fmt ` shorter than 16 bytes or cut off, `data`
 * before `fmt `, no `data`), "not_audio" for an encoding this decoder does not read or no whole frame of audio.
 * A data size of 0 or 0xFFFFFFFF (a writer that could not seek back) or beyond the end runs to the end.
 */
export async function readWavLayout(file: FileWindow): Promise<WavLayout> {
  const head = await file.read(0, 12);
  const magic = head.toString("latin1", 0, 4);
  if (head.length < 12 || (magic !== "RIFF" && magic !== "RIFX") || head.toString("latin1", 8, 12) !== "WAVE") {
    throw failed("not a RIFF WAVE file");
  }
  const littleEndian = magic === "RIFF";
  let format: Format | null = null;
  let position = 12;
  for (let chunks = 0; position + 8 <= file.size; chunks++) {
    if (chunks >= MAX_CHUNKS) throw failed(`more than ${MAX_CHUNKS} chunks before the audio`);
    const header = await file.read(position, 8);
    const id = header.toString("latin1", 0, 4);
    const size = littleEndian ? header.readUInt32LE(4) : header.readUInt32BE(4);
    const body = position + 8;
    if (id === "fmt ") {
      if (size < 16) throw failed(`fmt chunk of ${size} bytes`);
      const fmt = await file.read(body, Math.min(size, 40));
      if (fmt.length < Math.min(size, 40)) throw failed("fmt chunk cut off");
      format = readFormat(fmt, littleEndian);
    } else if (id === "data") {
      if (!format) throw failed("data chunk before the fmt chunk");
      const available = file.size - body;
      const bytes = size === 0 || size === 0xffffffff || size > available ? available : size;
      const frameBytes = format.channels * format.bytesPerSample;
      const frames = Math.floor(bytes / frameBytes);
      if (frames === 0) throw notAudio("no audio in the data chunk");
      return { ...format, littleEndian, frameBytes, dataOffset: body, frames };
    }
    // Chunks are word-aligned: an odd size is followed by a pad byte.
    position = body + size + (size & 1);
  }
  throw failed(format ? "no data chunk" : "no fmt chunk");
}

function alawToLinear(value: number) {
  const a = value ^ 0x55;
  const segment = (a & 0x70) >> 4;
  let t = (a & 0x0f) << 4;
  if (segment === 0) t += 8;
  else t = (t + 0x108) << (segment - 1);
  return a & 0x80 ? t : -t;
}

function mulawToLinear(value: number) {
  const u = ~value & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

const G711 = {
  alaw: Float32Array.from({ length: 256 }, (_, i) => alawToLinear(i) / 32768),
  mulaw: Float32Array.from({ length: 256 }, (_, i) => mulawToLinear(i) / 32768),
};

/** Float samples as they are, except that NaN and ±Infinity (never audio) cannot poison the filters after. */
function finite(x: number) {
  return x > 8 ? 8 : x < -8 ? -8 : x === x ? x : 0;
}

/** One sample reader per encoding, each giving -1 … 1 (float: as stored). */
function sampleReader(layout: WavLayout, view: DataView): (at: number) => number {
  const le = layout.littleEndian;
  switch (layout.encoding) {
    case "unsigned":
      return (at) => (view.getUint8(at) - 128) / 128;
    case "alaw":
    case "mulaw": {
      const table = G711[layout.encoding];
      return (at) => table[view.getUint8(at)]!;
    }
    case "float":
      return layout.bytesPerSample === 8
        ? (at) => finite(view.getFloat64(at, le))
        : (at) => finite(view.getFloat32(at, le));
    case "signed":
      if (layout.bytesPerSample === 2) return (at) => view.getInt16(at, le) / 32768;
      if (layout.bytesPerSample === 4) return (at) => view.getInt32(at, le) / 2147483648;
      return le
        ? (at) => ((view.getInt8(at + 2) << 16) | (view.getUint8(at + 1) << 8) | view.getUint8(at)) / 8388608
        : (at) => ((view.getInt8(at) << 16) | (view.getUint8(at + 1) << 8) | view.getUint8(at + 2)) / 8388608;
  }
}

/** Whole frames of `bytes` mixed down to mono (the channels' mean, as ffmpeg's -ac 1 does). */
export function wavFramesToMono(bytes: Uint8Array, layout: WavLayout): Float32Array {
  const frames = Math.floor(bytes.length / layout.frameBytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, frames * layout.frameBytes);
  const read = sampleReader(layout, view);
  const out = new Float32Array(frames);
  const { channels, bytesPerSample, frameBytes } = layout;
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0, at = f * frameBytes; c < channels; c++, at += bytesPerSample) sum += read(at);
    out[f] = sum / channels;
  }
  return out;
}

/** The data chunk as mono blocks of up to `framesPerBlock` frames, read as they are needed. */
export async function* wavMonoBlocks(file: FileWindow, layout: WavLayout, framesPerBlock = 16_384) {
  for (let frame = 0; frame < layout.frames; frame += framesPerBlock) {
    const count = Math.min(framesPerBlock, layout.frames - frame);
    const bytes = await file.read(layout.dataOffset + frame * layout.frameBytes, count * layout.frameBytes);
    if (bytes.length < layout.frameBytes) return;
    yield wavFramesToMono(bytes, layout);
  }
}
