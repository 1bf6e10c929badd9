import { execFile } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { toneWav } from "./wav";

// Hostile uploads, made in memory or in a temp dir at test time (nothing binary is committed): files whose
// magic bytes lie, WAV and MP3 headers that are broken or claim far more audio than they hold, a gzip body
// that would inflate to 1 GiB, a PDF whose one content stream inflates to hundreds of MiB, and file names
// that try paths, control characters, markup and bidi tricks.

export type BadFile = { label: string; name: string; type: string; bytes: Buffer };

const ascii = (text: string) => Buffer.from(text, "latin1");

/** A 16-bit PCM WAV header in front of `data`, with every field that matters overridable. */
export function wavWith(
  data: Buffer,
  fields: { riffType?: string; channels?: number; rate?: number; dataSize?: number; fmtSize?: number } = {},
) {
  const { riffType = "WAVE", channels = 1, rate = 16_000, fmtSize = 16 } = fields;
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "latin1");
  header.writeUInt32LE(36 + data.length, 4);
  header.write(riffType, 8, "latin1");
  header.write("fmt ", 12, "latin1");
  header.writeUInt32LE(fmtSize, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(Math.min(rate * Math.max(channels, 1) * 2, 0xffffffff), 28);
  header.writeUInt16LE(Math.max(channels, 1) * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "latin1");
  header.writeUInt32LE(fields.dataSize ?? data.length, 40);
  return Buffer.concat([header, data]);
}

const TONE = toneWav(2).subarray(44);

/** PDF, PNG, HTML and ZIP bytes under audio names and audio types. */
export function wrongMagicFiles(): BadFile[] {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);
  const zip = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(200, 1)]);
  return [
    { label: "PDF", name: "befund.wav", type: "audio/wav", bytes: ascii("%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n") },
    { label: "PNG", name: "foto.mp3", type: "audio/mpeg", bytes: png },
    { label: "HTML", name: "seite.wav", type: "audio/wav", bytes: ascii("<!DOCTYPE html><html><body>x</body></html>") },
    { label: "ZIP", name: "archiv.mp3", type: "audio/mpeg", bytes: zip },
  ];
}

/** The message each {@link wrongMagicFiles} entry earns: the content's own type where it is recognisable. */
export const WRONG_MAGIC_TYPES: Record<string, string> = {
  PDF: "application/pdf",
  PNG: "audio/mpeg",
  HTML: "text/html",
  ZIP: "application/zip",
};

/** Headers ffprobe refuses, and one (1 Hz) it believes: 64 KB that would resample to ~256 MB of PCM. */
export function brokenHeaderFiles(): BadFile[] {
  const wav = (label: string, bytes: Buffer) => ({ label, name: `${label}.wav`, type: "audio/wav", bytes });
  const shortFmt = wavWith(TONE);
  shortFmt.writeUInt32LE(8, 16);
  const id3 = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 20]), ascii("TIT2"), Buffer.alloc(16)]);
  return [
    wav("truncated-fmt", wavWith(TONE).subarray(0, 30)),
    wav("short-fmt", shortFmt),
    wav("zero-channels", wavWith(TONE, { channels: 0 })),
    wav("zero-rate", wavWith(TONE, { rate: 0 })),
    wav("huge-rate", wavWith(TONE, { rate: 0xffffffff })),
    wav("four-hertz", wavWith(TONE.subarray(0, 64_000), { rate: 4 })),
    { label: "riff-avi", name: "riff-avi.wav", type: "audio/wav", bytes: wavWith(TONE, { riffType: "AVI " }) },
    { label: "id3-only", name: "id3-only.mp3", type: "audio/mpeg", bytes: id3 },
  ];
}

/** What each broken header is refused as: by magic bytes (RIFF but not WAVE) or after ffprobe. */
export function brokenHeaderType(file: BadFile) {
  if (file.label === "riff-avi") return "audio/wav";
  return file.type;
}

/** 2 s of tone whose data chunk claims 4 GiB: 37 hours at the declared 32,000 bytes a second. */
export function wavBomb(): BadFile {
  return { label: "wav-bomb", name: "bombe.wav", type: "audio/wav", bytes: wavWith(TONE, { dataSize: 0xfffffff0 }) };
}

const run = promisify(execFile);

/** A 3 s MP3 whose Xing/Info header claims 50 million frames (about 15 days at 44.1 kHz). */
export async function xingBomb(dir: string): Promise<BadFile> {
  const file = path.join(dir, `xing-${process.pid}.mp3`);
  const tone = ["-f", "lavfi", "-i", "sine=frequency=440:duration=3"];
  const mp3 = ["-codec:a", "libmp3lame", "-b:a", "64k", "-id3v2_version", "0", "-write_id3v1", "0"];
  await run("ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", "-y", ...tone, ...mp3, file]);
  const bytes = fs.readFileSync(file);
  const at = Math.max(bytes.indexOf("Xing"), bytes.indexOf("Info"));
  if (at < 0) throw new Error("ffmpeg wrote no Xing/Info header");
  bytes.writeUInt32BE(50_000_000, at + 8);
  return { label: "xing-bomb", name: "xing.mp3", type: "audio/mpeg", bytes };
}

/**
 * A gzip body that inflates to 1 GiB of zeros: 64 concatenated gzip members of 16 MiB each (gunzip reads
 * every member), about 1 MiB on the wire.
 */
export function gzipBomb() {
  const member = zlib.gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 });
  return { body: Buffer.concat(Array.from({ length: 64 }, () => member)), inflated: 1024 * 1024 * 1024, member };
}

/** Deflates `MiB` mebibytes of `fill` bytes, 16 MiB at a time, so the whole never sits in memory. */
async function deflatedRun(MiB: number, fill: number, head: Buffer) {
  const deflate = zlib.createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on("data", (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve, reject) => deflate.on("end", resolve).on("error", reject));
  const chunk = Buffer.alloc(16 << 20, fill);
  deflate.write(head);
  for (let left = MiB; left > 0; left -= 16) {
    if (!deflate.write(left >= 16 ? chunk : chunk.subarray(0, left << 20))) await once(deflate, "drain");
  }
  deflate.end();
  await done;
  return Buffer.concat(out);
}

/** A one-page PDF whose content stream is `inflatedMiB` MiB of spaces, deflated (~1 KB per MiB). */
export async function pdfBomb(inflatedMiB: number) {
  const stream = await deflatedRun(inflatedMiB, 0x20, ascii("BT /F1 12 Tf 56 780 Td (Hallo) Tj ET\n"));
  const parts: Buffer[] = [ascii("%PDF-1.7\n")];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  const add = (chunk: Buffer) => {
    parts.push(chunk);
    length += chunk.length;
  };
  const object = (n: number, body: Buffer) => {
    offsets.push(length);
    add(Buffer.concat([ascii(`${n} 0 obj\n`), body, ascii("\nendobj\n")]));
  };
  object(1, ascii("<< /Type /Catalog /Pages 2 0 R >>"));
  object(2, ascii("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"));
  object(3, ascii("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>"));
  const dictionary = ascii(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`);
  object(4, Buffer.concat([dictionary, stream, ascii("\nendstream")]));
  const xref = length;
  const entries = offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  add(
    ascii(`xref\n0 5\n0000000000 65535 f \n${entries}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`),
  );
  return Buffer.concat(parts);
}

/**
 * Names a client may send; `shown` is what the server keeps and shows (no path, no control or bidi characters,
 * at most 100 characters). A browser's form escapes CR, LF and '"' in a file name (%0D, %0A, %22): `formShown`,
 * null where the form's parser cannot read the name at all (a ";" or "=" in it).
 */
export const HOSTILE_NAMES: Array<{ label: string; name: string; shown: string; formShown?: string | null }> = [
  { label: "path traversal", name: "../../etc/passwd.wav", shown: "passwd.wav" },
  { label: "backslashes", name: "..\\..\\x.wav", shown: "x.wav" },
  { label: "NUL", name: "ab\u0000c.wav", shown: "abc.wav" },
  {
    label: "CR/LF",
    name: "a\r\nX-Injected: 1\r\n\r\nb.wav",
    shown: "aX-Injected: 1b.wav",
    formShown: "a%0D%0AX-Injected: 1%0D%0A%0D%0Ab.wav",
  },
  {
    label: "markup",
    name: '<img src=x onerror="alert(1)">.wav',
    shown: '<img src=x onerror="alert(1)">.wav',
    formShown: null,
  },
  { label: "script", name: "<script>alert(1)</script>.wav", shown: "script>.wav" },
  { label: "semicolon", name: "Befund; Müller.wav", shown: "Befund; Müller.wav", formShown: null },
  { label: "RTL override", name: "Befund\u202Evaw.exe", shown: "Befundvaw.exe" },
  { label: "1,000 characters", name: `${"a".repeat(996)}.wav`, shown: "a".repeat(100) },
  { label: "only dots", name: "...", shown: "..." },
  { label: "leading dash", name: "-rf --help.wav", shown: "-rf --help.wav" },
];

/** Upload keys are the server's own: area, owner, timestamp, a UUID and the container — never a client name. */
export function serverKeyPattern(userId: string) {
  return new RegExp(`^audio/${userId}/\\d{8}-\\d{6}-[0-9a-f-]{36}\\.(wav|mp3)$`);
}

/** A sparse file of `bytes` bytes starting with a WAV header (no data written). */
export function sparseWav(dir: string, bytes: number) {
  const file = path.join(dir, `sparse-${process.pid}-${bytes}.wav`);
  fs.writeFileSync(file, wavWith(TONE.subarray(0, 64)));
  fs.truncateSync(file, bytes);
  return file;
}
