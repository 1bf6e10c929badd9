import { open, stat } from "node:fs/promises";
import path from "node:path";
import { SPEECH_SAMPLE_RATE, decodeToSpeechWav } from "../media/decode.server";
import { DEFAULT_FFMPEG_PATH, runProgram } from "../media/ffprobe.server";
import { MediaProbeError } from "../media/probe-error.server";
import { SNIFF_BYTES, sniffAudioType } from "../media/sniff.server";
import { SpeechEngineError } from "./types";

// Every engine gets the same input: 16 kHz, mono, 16-bit PCM WAV. Uploads (MP3 and WAV) are decoded and
// resampled inside this process (media/decode.server.ts) — no native decoder ever reads them. The length of
// the decoded audio is measured here (not read from a header), so the duration cap holds for the audio the
// engine will actually hear; decoding stops a second past the cap.
//
// A live recording's own file can be WebM or MP4 (app/services/live/*): those still go through Debian's
// ffmpeg, as the live path that made them does.

export { DEFAULT_FFMPEG_PATH } from "../media/ffprobe.server";
const BYTES_PER_SECOND = SPEECH_SAMPLE_RATE * 2;
const WAV_HEADER_BYTES = 44;
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

const undecodable = (message: string, cause?: unknown) =>
  new SpeechEngineError("permanent", message, { userMessageKey: "transcriptions:errors.undecodable", cause });
const tooLong = (maxDurationSeconds: number) =>
  new SpeechEngineError("permanent", `Audio is longer than ${maxDurationSeconds} s`, {
    userMessageKey: "transcriptions:errors.tooLong",
  });

async function sniffFile(file: string) {
  const handle = await open(file, "r");
  try {
    const head = new Uint8Array(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return sniffAudioType(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

export async function normaliseAudio(args: {
  input: string;
  outputDir: string;
  maxDurationSeconds: number;
  timeoutMs?: number;
}): Promise<{ file: string; durationSeconds: number }> {
  const file = path.join(args.outputDir, "speech-16k.wav");
  const format = await sniffFile(args.input);
  if (!format) return normaliseWithFfmpeg({ ...args, file });
  // Stop decoding a little past the cap: a longer file is refused without converting all of it.
  const limitSeconds = Math.ceil(args.maxDurationSeconds) + 1;
  let result;
  try {
    result = await decodeToSpeechWav({
      input: args.input,
      output: file,
      format,
      maxSamples: limitSeconds * SPEECH_SAMPLE_RATE,
      deadline: Date.now() + (args.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
  } catch (error) {
    if (!(error instanceof MediaProbeError)) throw error;
    if (error.reason === "unavailable") {
      throw new SpeechEngineError("not_configured", error.message, {
        userMessageKey: "transcriptions:errors.conversionUnavailable",
        cause: error,
      });
    }
    if (error.reason === "timeout") {
      throw new SpeechEngineError("transient", "Audio conversion timed out", { cause: error });
    }
    throw undecodable(`The audio could not be decoded: ${error.message}`, error);
  }
  const durationSeconds = result.samples / SPEECH_SAMPLE_RATE;
  if (!result.complete || durationSeconds > args.maxDurationSeconds) throw tooLong(args.maxDurationSeconds);
  return { file, durationSeconds };
}

/** A live recording's WebM/MP4 (never an upload: those are MP3 or WAV by their magic bytes), with ffmpeg. */
async function normaliseWithFfmpeg(args: {
  input: string;
  file: string;
  maxDurationSeconds: number;
  timeoutMs?: number;
}): Promise<{ file: string; durationSeconds: number }> {
  const limit = String(Math.ceil(args.maxDurationSeconds) + 1);
  let result;
  try {
    result = await runProgram(
      DEFAULT_FFMPEG_PATH,
      ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", args.input, "-t", limit].concat([
        "-vn",
        "-ac",
        "1",
        "-ar",
        String(SPEECH_SAMPLE_RATE),
        "-c:a",
        "pcm_s16le",
        "-f",
        "wav",
        args.file,
      ]),
      args.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
  } catch (error) {
    if (error instanceof MediaProbeError && error.reason === "unavailable") {
      throw new SpeechEngineError("not_configured", "ffmpeg is not installed", {
        userMessageKey: "transcriptions:errors.conversionUnavailable",
        cause: error,
      });
    }
    if (error instanceof MediaProbeError && error.reason === "timeout") {
      throw new SpeechEngineError("transient", "Audio conversion timed out", { cause: error });
    }
    throw error;
  }
  if (result.code !== 0) throw undecodable(`ffmpeg could not decode the audio: ${result.stderr.slice(0, 300)}`);
  const { size } = await stat(args.file);
  const durationSeconds = Math.max(0, size - WAV_HEADER_BYTES) / BYTES_PER_SECOND;
  if (durationSeconds > args.maxDurationSeconds) throw tooLong(args.maxDurationSeconds);
  return { file: args.file, durationSeconds };
}
