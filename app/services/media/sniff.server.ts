// Magic bytes: what the first bytes of an upload say it is, before anything else looks at it, so a
// PDF or HTML page never reaches ffprobe (media/probe.server.ts).

/** How many leading bytes `validateAudioFile` reads for `sniffAudioType`. */
export const SNIFF_BYTES = 64;

export type SniffedType = "mp3" | "wav" | null;

function ascii(head: Uint8Array, offset: number, text: string) {
  if (head.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) if (head[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * An ID3v2 header: "ID3", major version 2–4, a revision byte, flags, and a
 * four-byte "syncsafe" size whose bytes all have the top bit clear.
 */
function isId3v2(head: Uint8Array) {
  if (!ascii(head, 0, "ID3") || head.length < 10) return false;
  if (head[3] < 2 || head[3] > 4 || head[4] === 0xff) return false;
  return head[6] < 0x80 && head[7] < 0x80 && head[8] < 0x80 && head[9] < 0x80;
}

/**
 * An MPEG audio layer III frame header at offset 0: 11-bit frame sync, a
 * version other than "reserved" (MPEG 1, 2 or 2.5), layer III, a bitrate index
 * other than "bad" (1111) and a sample-rate index other than "reserved" (11).
 * This excludes AAC/ADTS (layer 00) and MP1/MP2 as well as stray 0xFF bytes.
 */
function isMpegLayer3Frame(head: Uint8Array) {
  if (head.length < 4 || head[0] !== 0xff || (head[1] & 0xe0) !== 0xe0) return false;
  const version = (head[1] >> 3) & 0b11;
  const layer = (head[1] >> 1) & 0b11;
  const bitrateIndex = head[2] >> 4;
  const sampleRateIndex = (head[2] >> 2) & 0b11;
  return version !== 0b01 && layer === 0b01 && bitrateIndex !== 0b1111 && sampleRateIndex !== 0b11;
}

/**
 * Magic bytes only (the first ≤ 64 bytes; only offset 0 is looked at).
 * WAV: "RIFF" <size> "WAVE". MP3: an ID3v2 tag, or an MPEG layer III frame header.
 * Anything else — "%PDF", "<!DOCTYPE"/"<html", zip, text, leading junk — is null.
 */
export function sniffAudioType(head: Uint8Array): SniffedType {
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "WAVE")) return "wav";
  if (isId3v2(head) || isMpegLayer3Frame(head)) return "mp3";
  return null;
}

/** What a non-audio file most likely is, for the rejection message only. */
export function describeContent(head: Uint8Array): string | null {
  const text = new TextDecoder("latin1").decode(head.subarray(0, SNIFF_BYTES)).trimStart().toLowerCase();
  if (text.startsWith("%pdf")) return "application/pdf";
  if (text.startsWith("<!doctype html") || text.startsWith("<html")) return "text/html";
  if (text.startsWith("<?xml") || text.startsWith("<svg")) return "application/xml";
  if (text.startsWith("pk\u0003\u0004")) return "application/zip";
  if (text.startsWith("oggs")) return "audio/ogg";
  if (text.startsWith("flac")) return "audio/flac";
  if (ascii(head, 4, "ftyp")) return "video/mp4";
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return "video/webm";
  return null;
}
