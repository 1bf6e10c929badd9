import fs from "node:fs/promises";
import path from "node:path";
import { MediaProbeError, runProgram } from "../media-ffprobe.server";
import { SpeechEngineError } from "./types";

// Every engine gets the same input: 16 kHz, mono, 16-bit PCM WAV made by Debian's ffmpeg. The length of
// the decoded audio is measured here (not read from a header), so the duration cap holds for the audio
// the engine will actually hear.

export const DEFAULT_FFMPEG_PATH = "ffmpeg";
const BYTES_PER_SECOND = 16_000 * 2;
const WAV_HEADER_BYTES = 44;

export async function normaliseAudio(args: {
  input: string;
  outputDir: string;
  maxDurationSeconds: number;
  ffmpegPath?: string;
  timeoutMs?: number;
}): Promise<{ file: string; durationSeconds: number }> {
  const file = path.join(args.outputDir, "speech-16k.wav");
  // Stop decoding a little past the cap: a longer file is refused without converting all of it.
  const limit = String(Math.ceil(args.maxDurationSeconds) + 1);
  let result;
  try {
    result = await runProgram(
      args.ffmpegPath ?? DEFAULT_FFMPEG_PATH,
      ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", args.input, "-t", limit].concat([
        "-vn",
        "-ac",
        "1",
        "-ar",
        "16000",
        "-c:a",
        "pcm_s16le",
        "-f",
        "wav",
        file,
      ]),
      args.timeoutMs ?? 10 * 60_000,
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
  if (result.code !== 0) {
    throw new SpeechEngineError("permanent", `ffmpeg could not decode the audio: ${result.stderr.slice(0, 300)}`, {
      userMessageKey: "transcriptions:errors.undecodable",
    });
  }
  const { size } = await fs.stat(file);
  const durationSeconds = Math.max(0, size - WAV_HEADER_BYTES) / BYTES_PER_SECOND;
  if (durationSeconds > args.maxDurationSeconds) {
    throw new SpeechEngineError("permanent", `Audio is longer than ${args.maxDurationSeconds} s`, {
      userMessageKey: "transcriptions:errors.tooLong",
    });
  }
  return { file, durationSeconds };
}
