import { copyFile, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  makeFake,
  makeMp3,
  makeSparseFile,
  makeSpeechWav,
  makeTempDir,
  makeTone,
  noise,
  removeTempDir,
} from "../../tests/support/audio-fixtures";
import {
  ACCEPTED_AUDIO_TYPES,
  MAX_AUDIO_BYTES,
  MediaProbeError,
  checkDeclaredAudio,
  ffprobeAvailable,
  formatDuration,
  formatFileSize,
  mediaConversionHealthCheck,
  probeAudioFile,
  sniffAudioType,
  tooLongMessage,
  validateAudioFile,
} from "./media-probe.server";

let dir: string;
let speechWav: string;
let speechMp3: string;
let taggedMp3: string;

beforeAll(async () => {
  dir = await makeTempDir("skribent-media-probe-");
  speechWav = await makeSpeechWav(dir);
  speechMp3 = await makeMp3(dir, speechWav);
  taggedMp3 = await makeMp3(dir, speechWav, { id3: true });
});

afterAll(async () => {
  await removeTempDir(dir);
});

/** A stand-in for ffprobe that only leaves a marker file behind when it is run. */
async function markerProbe(name: string) {
  const marker = path.join(dir, `${name}.ran`);
  const script = path.join(dir, `${name}.sh`);
  await writeFile(script, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`, { mode: 0o755 });
  return { script, marker, ran: () => existsSync(marker) };
}

function bytes(...values: (number | string)[]) {
  const out: number[] = [];
  for (const v of values) {
    if (typeof v === "number") out.push(v);
    else for (const c of v) out.push(c.charCodeAt(0));
  }
  return new Uint8Array(out);
}

const unsupported = (type: string) =>
  `File type "${type}" is not supported. Please upload only MP3, or WAV files.` as const;

describe("sniffAudioType", () => {
  test.each([
    ["WAV", bytes("RIFF", 0x24, 0, 0, 0, "WAVEfmt "), "wav"],
    ["ID3v2.3 tag", bytes("ID3", 3, 0, 0, 0, 0, 0x02, 0x01), "mp3"],
    ["ID3v2.4 tag", bytes("ID3", 4, 0, 0, 0, 0, 0, 0x23), "mp3"],
    ["MPEG-1 layer III frame", bytes(0xff, 0xfb, 0x90, 0x64), "mp3"],
    ["MPEG-2 layer III frame", bytes(0xff, 0xf3, 0x88, 0xc0), "mp3"],
    ["MPEG-2.5 layer III frame", bytes(0xff, 0xe3, 0x18, 0xc4), "mp3"],
    ["PDF", bytes("%PDF-1.7\n"), null],
    ["HTML doctype", bytes("<!DOCTYPE html><html>"), null],
    ["HTML tag", bytes("<html><body>"), null],
    ["zip", bytes("PK", 3, 4, 20, 0), null],
    ["text", bytes("hello world, this is not audio"), null],
    ["RIFF that is AVI", bytes("RIFF", 0, 0, 0, 0, "AVI LIST"), null],
    ["AAC/ADTS (layer 00)", bytes(0xff, 0xf1, 0x50, 0x80), null],
    ["MPEG layer II", bytes(0xff, 0xfd, 0x90, 0x64), null],
    ["reserved MPEG version", bytes(0xff, 0xeb, 0x90, 0x64), null],
    ["bad bitrate index", bytes(0xff, 0xfb, 0xf0, 0x64), null],
    ["reserved sample rate", bytes(0xff, 0xfb, 0x9c, 0x64), null],
    ["lone 0xFF", bytes(0xff, 0x00, 0x00, 0x00), null],
    ["header cut short", bytes(0xff, 0xfb, 0x90), null],
    ["ID3 with impossible version", bytes("ID3", 9, 0, 0, 0, 0, 0, 0), null],
    ["ID3 with a non-syncsafe size", bytes("ID3", 3, 0, 0, 0x80, 0, 0, 0), null],
    ["audio behind leading junk", bytes(0, 0, 0xff, 0xfb, 0x90, 0x64), null],
    ["nothing", bytes(), null],
  ])("%s", (_name, head, expected) => {
    expect(sniffAudioType(head)).toBe(expected);
  });
});

describe("formatFileSize and formatDuration", () => {
  test.each([
    [73_400_320, "70 MB"],
    [73_400_321, "70.1 MB"],
    [75_000_000, "71.6 MB"],
    [104_857_600, "100 MB"],
    [1_048_576 * 1.25, "1.3 MB"],
    [1, "0.1 MB"],
    [0, "0 MB"],
  ])("%d bytes → %s", (size, text) => {
    expect(formatFileSize(size)).toBe(text);
  });

  test.each([
    [0, "0:00:00"],
    [3, "0:00:03"],
    [61, "0:01:01"],
    [4 * 3600, "4:00:00"],
    [4 * 3600 + 1, "4:00:01"],
  ])("%d s → %s", (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  test.each([
    [3.03, 2, "Recording is too long (0:00:03). Maximum length is 0:00:02."],
    [2.2, 2, "Recording is too long (0:00:03). Maximum length is 0:00:02."],
    [4 * 3600 + 0.4, 4 * 3600, "Recording is too long (4:00:01). Maximum length is 4:00:00."],
    [5 * 3600 + 1799, 4 * 3600, "Recording is too long (5:29:59). Maximum length is 4:00:00."],
  ])("%d s over a %d s cap", (duration, max, message) => {
    expect(tooLongMessage(duration, max)).toBe(message);
  });
});

describe("checkDeclaredAudio (SPEC §5 first-line checks)", () => {
  test.each(ACCEPTED_AUDIO_TYPES)("accepts %s", (type) => {
    expect(checkDeclaredAudio({ type, size: 1000 })).toBeNull();
  });

  test("accepts exactly the maximum size and MIME parameters", () => {
    expect(checkDeclaredAudio({ type: "audio/wav", size: MAX_AUDIO_BYTES })).toBeNull();
    expect(checkDeclaredAudio({ type: "Audio/MPEG; foo=bar", size: 1 })).toBeNull();
  });

  test.each([
    ["application/pdf", "Unsupported file type: application/pdf. Please upload MP3 or WAV files."],
    ["video/webm", "Unsupported file type: video/webm. Please upload MP3 or WAV files."],
    ["", "Unsupported file type: unknown. Please upload MP3 or WAV files."],
    ["audio/ogg", unsupported("audio/ogg")],
    ["audio/webm", unsupported("audio/webm")],
  ])("rejects type %j", (type, message) => {
    expect(checkDeclaredAudio({ type, size: 1000 })).toEqual({ code: "unsupported_type", message });
  });

  test("rejects an empty file", () => {
    expect(checkDeclaredAudio({ type: "audio/mpeg", size: 0 })).toEqual({
      code: "empty",
      message: "Invalid audio data: Empty file",
    });
  });

  test("rejects one byte over the maximum", () => {
    expect(checkDeclaredAudio({ type: "audio/mpeg", size: MAX_AUDIO_BYTES + 1 })).toEqual({
      code: "too_large",
      message: "File is too large (70.1 MB). Maximum size is 70 MB.",
    });
  });
});

describe("validateAudioFile on real audio", () => {
  test("accepts a German speech WAV (16 kHz mono 16-bit)", async () => {
    const result = await validateAudioFile(speechWav, { declaredType: "audio/wav" });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.sniffed).toBe("wav");
    expect(result.probe).toMatchObject({ format: "wav", sampleRate: 16000, channels: 1, codec: "pcm_s16le" });
    expect(result.probe.durationSeconds).toBeGreaterThan(2);
    expect(result.probe.durationSeconds).toBeLessThan(15);
  });

  test("accepts its MP3 (frame header first, no tag) with about the same duration", async () => {
    const head = (await readFile(speechMp3)).subarray(0, 4);
    expect(head[0]).toBe(0xff);
    const [wav, mp3] = await Promise.all([validateAudioFile(speechWav), validateAudioFile(speechMp3)]);
    expect(wav.ok && mp3.ok).toBe(true);
    if (!wav.ok || !mp3.ok) return;
    expect(mp3.sniffed).toBe("mp3");
    expect(mp3.probe).toMatchObject({ format: "mp3", codec: "mp3", sampleRate: 16000, channels: 1 });
    expect(Math.abs(mp3.probe.durationSeconds - wav.probe.durationSeconds)).toBeLessThan(0.3);
  });

  test("accepts an MP3 that starts with an ID3v2 tag", async () => {
    const head = (await readFile(taggedMp3)).subarray(0, 3).toString("latin1");
    expect(head).toBe("ID3");
    const result = await validateAudioFile(taggedMp3, { declaredType: "audio/mpeg" });
    expect(result).toMatchObject({ ok: true, sniffed: "mp3", probe: { format: "mp3", codec: "mp3" } });
  });

  test("ignores the client's MIME type and the file name: a real WAV named .mp3, declared as PDF, is a WAV", async () => {
    const renamed = path.join(dir, "actually-wav.mp3");
    await copyFile(speechWav, renamed);
    const result = await validateAudioFile(renamed, { declaredType: "application/pdf" });
    expect(result).toMatchObject({ ok: true, sniffed: "wav", probe: { format: "wav" } });
  });

  test("files with odd names are probed as plain files", async () => {
    const odd = path.join(dir, "-v quiet concat:a|b;$(touch x).wav");
    await copyFile(speechWav, odd);
    expect(await validateAudioFile(odd)).toMatchObject({ ok: true, sniffed: "wav" });
  });
});

describe("validateAudioFile rejects before probing", () => {
  test("the marker stand-in for ffprobe does record a run", async () => {
    const probe = await markerProbe("control");
    const result = await validateAudioFile(speechWav, { ffprobePath: probe.script });
    expect(probe.ran()).toBe(true);
    expect(result).toEqual({ ok: false, rejection: { code: "unreadable", message: unsupported("audio/wav") } });
  });

  test.each([
    ["pdf", "application/pdf"],
    ["html", "text/html"],
  ] as const)("a %s named .mp3 is rejected by its magic bytes; ffprobe never runs", async (kind, type) => {
    const file = await makeFake(dir, kind, `report-${kind}.mp3`);
    const probe = await markerProbe(`fake-${kind}`);
    const result = await validateAudioFile(file, { declaredType: "audio/mpeg", ffprobePath: probe.script });
    expect(result).toEqual({ ok: false, rejection: { code: "unsupported_type", message: unsupported(type) } });
    expect(probe.ran()).toBe(false);
  });

  test("unrecognisable bytes name the declared type (or 'unknown')", async () => {
    const file = await makeFake(dir, "garbage", "noise.mp3");
    const probe = await markerProbe("garbage");
    expect(await validateAudioFile(file, { declaredType: "audio/mpeg", ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("audio/mpeg") },
    });
    expect(await validateAudioFile(file, { ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("unknown") },
    });
    expect(probe.ran()).toBe(false);
  });

  test("an empty file gets the empty message", async () => {
    const file = await makeFake(dir, "empty", "empty.mp3");
    const probe = await markerProbe("empty");
    expect(await validateAudioFile(file, { ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "empty", message: "Invalid audio data: Empty file" },
    });
    expect(probe.ran()).toBe(false);
  });

  test("73,400,321 bytes are too large before anything else, even with a WAV header", async () => {
    const wavHead = (await readFile(speechWav)).subarray(0, 64);
    const file = await makeSparseFile(dir, MAX_AUDIO_BYTES + 1, "big.wav", wavHead);
    const probe = await markerProbe("too-large");
    expect(await validateAudioFile(file, { ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "too_large", message: "File is too large (70.1 MB). Maximum size is 70 MB." },
    });
    expect(probe.ran()).toBe(false);
  });

  test("exactly 73,400,320 bytes of garbage pass the size check and fail on type", async () => {
    const file = await makeSparseFile(dir, MAX_AUDIO_BYTES, "max.mp3", noise(64, 42).fill(0x41, 0, 4));
    const probe = await markerProbe("max-size");
    expect(await validateAudioFile(file, { ffprobePath: probe.script })).toEqual({
      ok: false,
      rejection: { code: "unsupported_type", message: unsupported("unknown") },
    });
    expect(probe.ran()).toBe(false);
  });
});

describe("validateAudioFile rejects what ffprobe cannot decode", () => {
  test("noise behind a valid MPEG frame header: ffprobe opens it, but nothing decodes", async () => {
    const file = await makeFake(dir, "mpeg-garbage", "noise-frames.mp3");
    expect(sniffAudioType((await readFile(file)).subarray(0, 64))).toBe("mp3");
    await expect(probeAudioFile(file)).rejects.toMatchObject({ name: "MediaProbeError", reason: "not_audio" });
    expect(await validateAudioFile(file, { declaredType: "audio/mpeg" })).toEqual({
      ok: false,
      rejection: { code: "unreadable", message: unsupported("audio/mpeg") },
    });
  });

  test("an MP3 cut off inside its first frame: ffprobe fails", async () => {
    const file = await makeFake(dir, "truncated", "cut.mp3");
    await expect(probeAudioFile(file)).rejects.toMatchObject({ reason: "failed" });
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "unreadable", message: unsupported("audio/mpeg") },
    });
  });

  test("the container must agree with the magic bytes: an ID3 tag in front of a WAV", async () => {
    const id3Header = bytes("ID3", 4, 0, 0, 0, 0, 0, 0);
    const file = path.join(dir, "id3-then-wav.mp3");
    await writeFile(file, Buffer.concat([id3Header, await readFile(speechWav)]));
    expect(sniffAudioType(id3Header)).toBe("mp3");
    await expect(probeAudioFile(file)).resolves.toMatchObject({ format: "wav" });
    expect(await validateAudioFile(file)).toEqual({
      ok: false,
      rejection: { code: "unreadable", message: unsupported("audio/mpeg") },
    });
  });
});

describe("duration cap", () => {
  test.each(["wav", "mp3"] as const)("a 3 s %s tone is too long for a 2 s cap and fine under 4 s", async (format) => {
    const tone = await makeTone(dir, 3, format);
    expect(await validateAudioFile(tone, { maxDurationSeconds: 2 })).toEqual({
      ok: false,
      rejection: { code: "too_long", message: "Recording is too long (0:00:03). Maximum length is 0:00:02." },
    });
    const fine = await validateAudioFile(tone, { maxDurationSeconds: 4 });
    expect(fine.ok).toBe(true);
    if (fine.ok) expect(fine.probe.durationSeconds).toBeCloseTo(3, 0);
  });

  test("the default cap is 4 hours", async () => {
    const tone = await makeTone(dir, 1, "wav");
    expect((await validateAudioFile(tone)).ok).toBe(true);
  });
});

describe("running ffprobe", () => {
  test("passes the file only as a file: URL of its absolute path, with only the file protocol allowed", async () => {
    const argsFile = path.join(dir, "args.txt");
    const script = path.join(dir, "print-args.sh");
    await writeFile(script, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nexit 1\n`, { mode: 0o755 });
    const relative = path.relative(process.cwd(), speechWav);
    await expect(probeAudioFile(relative, { ffprobePath: script })).rejects.toMatchObject({ reason: "failed" });
    const args = (await readFile(argsFile, "utf8")).trimEnd().split("\n");
    expect(args.at(-1)).toBe(`file:${speechWav}`);
    expect(args.slice(args.indexOf("-protocol_whitelist"), args.indexOf("-protocol_whitelist") + 2)).toEqual([
      "-protocol_whitelist",
      "file",
    ]);
    expect(args.filter((a) => a.includes(path.basename(speechWav)))).toHaveLength(1);
  });

  test("a probe that hangs is killed at the time-out and the file counts as unreadable", async () => {
    const pidFile = path.join(dir, "hang.pid");
    const script = path.join(dir, "hang.sh");
    await writeFile(script, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 10\n`, { mode: 0o755 });

    const started = performance.now();
    const result = await validateAudioFile(speechWav, { ffprobePath: script, timeoutMs: 200 });
    const elapsed = performance.now() - started;

    expect(result).toEqual({ ok: false, rejection: { code: "unreadable", message: unsupported("audio/wav") } });
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1500);
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    expect(pid).toBeGreaterThan(0);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  test("probeAudioFile reports the time-out as such", async () => {
    const script = path.join(dir, "hang2.sh");
    await writeFile(script, `#!/bin/sh\nexec sleep 10\n`, { mode: 0o755 });
    const error = await probeAudioFile(speechWav, { ffprobePath: script, timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaProbeError);
    expect(error).toMatchObject({ reason: "timeout" });
  });

  test("a missing ffprobe is a server fault, not the file's: validateAudioFile throws", async () => {
    const missing = path.join(dir, "no-such-ffprobe");
    await expect(validateAudioFile(speechWav, { ffprobePath: missing })).rejects.toMatchObject({
      name: "MediaProbeError",
      reason: "unavailable",
    });
  });
});

describe("health", () => {
  test("ffprobeAvailable", async () => {
    expect(await ffprobeAvailable()).toBe(true);
    expect(await ffprobeAvailable(path.join(dir, "no-such-ffprobe"))).toBe(false);
  });

  test("mediaConversionHealthCheck", async () => {
    expect(await mediaConversionHealthCheck()).toMatchObject({
      status: "healthy",
      detail: expect.stringMatching(/^ffprobe /),
    });
    expect(await mediaConversionHealthCheck(path.join(dir, "no-such-ffprobe"))).toMatchObject({ status: "error" });
  });
});
