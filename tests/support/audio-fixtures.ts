import { execFile } from "node:child_process";
import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

import { afterAll, beforeAll } from "vitest";

// Real test audio, made at test time with the Debian tools CI installs
// (.ci/run: ffmpeg, sox, espeak-ng) — nothing binary is committed.
//
//   const dir = await makeTempDir();                 // afterAll: await removeTempDir(dir)
//   const wav = await makeSpeechWav(dir);            // German speech, 16 kHz mono 16-bit, ~4 s
//   const mp3 = await makeMp3(dir, wav);             // MP3 that starts with a frame header (no ID3)
//   const tagged = await makeMp3(dir, wav, { id3: true }); // MP3 that starts with an ID3v2 tag
//   const tone = await makeTone(dir, 3, "mp3");      // 440 Hz sine, 3 s
//   const pdf = await makeFake(dir, "pdf", "befund.mp3"); // a PDF named .mp3
//   const big = await makeSparseFile(dir, 73_400_321);    // sparse: size without writing data
//
//   const speech = setupSpeechWav();                 // its own hooks; in tests: speech.wav(), speech.dir()
//
// Every helper returns the absolute path of the file it made. Default names are
// unique, so calling a helper twice in one directory never overwrites a file.

const run = promisify(execFile);

export const GERMAN_SAMPLE_TEXT =
  "Guten Tag. Der Patient berichtet über Kopfschmerzen seit drei Tagen und leichtes Fieber.";

let counter = 0;
function uniqueName(stem: string, extension: string) {
  counter += 1;
  return `${stem}-${process.pid}-${counter}.${extension}`;
}

async function tool(program: string, args: string[]) {
  try {
    await run(program, args, { timeout: 60_000 });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`${program} failed (is it installed? CI installs ffmpeg, sox, espeak-ng): ${stderr || message}`);
  }
}

const FFMPEG = ["-hide_banner", "-nostdin", "-loglevel", "error", "-y"];

/** A fresh directory under the OS temp dir. */
export async function makeTempDir(prefix = "skribent-audio-") {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function removeTempDir(dir: string) {
  await rm(dir, { recursive: true, force: true });
}

/**
 * German speech (espeak-ng, voice "de"), converted with sox to 16 kHz, mono,
 * 16-bit PCM WAV — the format the live recorder produces (SPEC §9).
 */
export async function makeSpeechWav(dir: string, text: string = GERMAN_SAMPLE_TEXT, name?: string) {
  const raw = path.resolve(dir, uniqueName("espeak", "wav"));
  const out = path.resolve(dir, name ?? uniqueName("speech", "wav"));
  await tool("espeak-ng", ["-v", "de", "-w", raw, "--", text]);
  await tool("sox", [raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out]);
  await rm(raw, { force: true });
  return out;
}

/**
 * One speech WAV (makeSpeechWav) in a temp directory of its own for the tests of the file or describe block that
 * calls this: made in a beforeAll, removed in an afterAll. The accessors are for use inside tests and hooks, once
 * the WAV is there; `dir()` is where more files can go beside it.
 */
export function setupSpeechWav() {
  let dir: string | undefined;
  let wav: string | undefined;
  beforeAll(async () => {
    dir = await makeTempDir();
    wav = await makeSpeechWav(dir);
  });
  afterAll(async () => {
    if (dir) await removeTempDir(dir);
  });
  function ready(value: string | undefined) {
    if (value === undefined) throw new Error("setupSpeechWav: the WAV is made in beforeAll; read it inside a test");
    return value;
  }
  return { wav: () => ready(wav), dir: () => ready(dir) };
}

/**
 * An MP3 (libmp3lame, 64 kbit/s) of `fromWav`, or of a fresh speech WAV when
 * omitted. By default the file has no ID3 tags at all, so it starts with an MPEG
 * frame header; `{ id3: true }` adds an ID3v2.4 tag (title "Skribent test") in
 * front, as most real-world MP3s have.
 */
export async function makeMp3(dir: string, fromWav?: string, options: { id3?: boolean; name?: string } = {}) {
  const source = fromWav ?? (await makeSpeechWav(dir));
  const out = path.resolve(dir, options.name ?? uniqueName(options.id3 ? "tagged" : "speech", "mp3"));
  const tags = options.id3
    ? ["-id3v2_version", "4", "-metadata", "title=Skribent test"]
    : ["-id3v2_version", "0", "-write_id3v1", "0", "-map_metadata", "-1"];
  await tool("ffmpeg", [...FFMPEG, "-i", source, "-codec:a", "libmp3lame", "-b:a", "64k", ...tags, out]);
  return out;
}

/** A 440 Hz sine tone of `seconds` (ffmpeg lavfi), as 16-bit PCM WAV or 64 kbit/s MP3 without tags. */
export async function makeTone(dir: string, seconds: number, format: "wav" | "mp3", name?: string) {
  const out = path.resolve(dir, name ?? uniqueName(`tone-${seconds}s`, format));
  const codec =
    format === "wav"
      ? ["-codec:a", "pcm_s16le"]
      : ["-codec:a", "libmp3lame", "-b:a", "64k", "-id3v2_version", "0", "-write_id3v1", "0"];
  await tool("ffmpeg", [...FFMPEG, "-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`, ...codec, out]);
  return out;
}

/**
 * Files that are not audio, whatever their name says (default name
 * `fake-{kind}.mp3`):
 * - "pdf": a small valid PDF starting with "%PDF-1.7";
 * - "html": an HTML page starting with "<!DOCTYPE html>";
 * - "empty": zero bytes;
 * - "garbage": deterministic noise that starts with no audio magic bytes;
 * - "mpeg-garbage": a valid MPEG-1 layer III frame header (FF FB 90 64) followed by
 *   deterministic noise, `bytes` long (default 100,000 — long enough that ffprobe's
 *   own probe calls it an MP3; only decoding shows it is not audio);
 * - "truncated": the same header plus 100 bytes: an MP3 cut off inside its first frame.
 */
export type FakeKind = "pdf" | "html" | "empty" | "garbage" | "mpeg-garbage" | "truncated";

export async function makeFake(dir: string, kind: FakeKind, name?: string, options: { bytes?: number } = {}) {
  const out = path.resolve(dir, name ?? uniqueName(`fake-${kind}`, "mp3"));
  await writeFile(out, fakeBytes(kind, options.bytes));
  return out;
}

/**
 * A sparse file of exactly `bytes` bytes (no data written), optionally starting
 * with `head` — for size limits such as 73,400,321 bytes.
 */
export async function makeSparseFile(dir: string, bytes: number, name?: string, head?: Uint8Array) {
  const out = path.resolve(dir, name ?? uniqueName(`sparse-${bytes}`, "mp3"));
  await writeFile(out, head ?? new Uint8Array());
  await truncate(out, bytes);
  return out;
}

const MPEG_FRAME_HEADER = [0xff, 0xfb, 0x90, 0x64];

/** Deterministic pseudo-random bytes (xorshift32), so a test never meets lucky noise. */
export function noise(length: number, seed = 0x5eed1234) {
  const bytes = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

function fakeBytes(kind: FakeKind, bytes?: number): Uint8Array {
  switch (kind) {
    case "empty":
      return new Uint8Array();
    case "pdf":
      return new TextEncoder().encode(
        [
          "%PDF-1.7",
          "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
          "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj",
          "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >> endobj",
          "trailer << /Root 1 0 R >>",
          "%%EOF",
          "",
        ].join("\n"),
      );
    case "html":
      return new TextEncoder().encode(
        '<!DOCTYPE html>\n<html lang="de"><head><title>Befund</title></head><body><p>Kein Audio.</p></body></html>\n',
      );
    case "garbage": {
      const data = noise(bytes ?? 4096);
      data.set(new TextEncoder().encode("JUNK"), 0);
      return data;
    }
    case "mpeg-garbage": {
      const data = noise(bytes ?? 100_000);
      data.set(MPEG_FRAME_HEADER, 0);
      return data;
    }
    case "truncated": {
      const data = noise(104);
      data.set(MPEG_FRAME_HEADER, 0);
      return data;
    }
  }
}
