import { spawn } from "node:child_process";
import { open, stat } from "node:fs/promises";
import path from "node:path";
import { childEnv } from "../config/child-env.server";
import { DEFAULT_FFPROBE_PATH, MediaProbeError, runProgram } from "../media/ffprobe.server";
import { SAMPLE_RATE_RANGE } from "../media/probe.server";
import { speechWavHeader } from "../media/decode.server";
import { DEFAULT_FFMPEG_PATH } from "../speech/normalise-audio.server";
import {
  acceptedCodec,
  copiesInto,
  ENCODE_ARGS,
  MUXER,
  sniffLiveAudio,
  type LiveContainer,
  type SniffedFamily,
} from "./save-format.server";

// ffmpeg and ffprobe for live recordings (issue 7). The server's own copy is encoded from the 16 kHz mono PCM
// the session stored, streamed through ffmpeg's stdin into a file (never held in memory: 45 minutes are
// ~86 MB of PCM). A WAV copy is that PCM behind a header, written here without ffmpeg — the copy a server
// without ffmpeg makes of every recording (issue 21: ffmpeg is not needed to run the app). The browser's copy is probed and rewritten into a clean file of the key's container:
// MediaRecorder's WebM has no duration and no cues, so players cannot seek in it as it arrives.

export const LIVE_PCM_BYTES_PER_SECOND = 16_000 * 2;
const FFMPEG_TIMEOUT_MS = 15 * 60_000;
const PROBE_TIMEOUT_MS = 30_000;
const QUIET = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"];

export class LiveAudioError extends Error {
  constructor(
    /** "rejected": the file is not acceptable audio; "failed": the server could not convert it. */
    readonly kind: "rejected" | "failed",
    message: string,
  ) {
    super(message);
    this.name = "LiveAudioError";
  }
}

export type AudioFile = { file: string; sizeBytes: number; durationSeconds: number };

/** Runs ffmpeg reading `input` from stdin, with backpressure; at most `maxBytes` are fed to it. */
function ffmpegFromStream(args: string[], input: AsyncIterable<Buffer>, maxBytes: number) {
  return new Promise<{ bytes: number }>((resolve, reject) => {
    const child = spawn(DEFAULT_FFMPEG_PATH, args, {
      shell: false,
      stdio: ["pipe", "ignore", "pipe"],
      env: childEnv(),
    });
    let stderr = "";
    let failure: Error | undefined;
    let bytes = 0;
    const stop = (error: Error) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => stop(new LiveAudioError("failed", "ffmpeg timed out")), FFMPEG_TIMEOUT_MS);
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4_000) stderr += chunk.toString("utf8");
    });
    // A closed stdin (ffmpeg died) surfaces through "close" below.
    child.stdin.on("error", () => undefined);
    child.on("error", (error) => stop(new LiveAudioError("failed", `cannot start ffmpeg: ${error.message}`)));
    child.on("close", (code) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code !== 0) reject(new LiveAudioError("failed", `ffmpeg exited with ${code}: ${stderr.slice(-300)}`));
      else resolve({ bytes });
    });
    // Waits for room in ffmpeg's stdin, or for ffmpeg to be gone (then the loop above stops).
    const drained = () =>
      new Promise<void>((done) => {
        const finish = () => {
          child.stdin.off("drain", finish);
          child.off("close", finish);
          done();
        };
        child.stdin.once("drain", finish);
        child.once("close", finish);
      });
    (async () => {
      for await (const chunk of input) {
        if (failure || child.stdin.destroyed) break;
        bytes += chunk.length;
        if (bytes > maxBytes) {
          stop(new LiveAudioError("rejected", "the live audio is longer than the duration cap"));
          break;
        }
        if (!child.stdin.write(chunk)) await drained();
      }
      child.stdin.end();
    })().catch((error: unknown) => stop(error instanceof Error ? error : new Error(String(error))));
  });
}

let ffmpegFound: Promise<boolean> | undefined;

/** Whether this machine has ffmpeg (asked once per process; an operator who installs it restarts the app). */
export function ffmpegAvailable() {
  ffmpegFound ??= runProgram(DEFAULT_FFMPEG_PATH, ["-version"], PROBE_TIMEOUT_MS).then(
    (run) => run.code === 0,
    () => false,
  );
  return ffmpegFound;
}

/** The container of the server's copy: the recorder's, or WAV where no ffmpeg can encode it. */
export async function serverCopyContainer(wanted: LiveContainer): Promise<LiveContainer> {
  return wanted === "wav" || (await ffmpegAvailable()) ? wanted : "wav";
}

const WAV_HEADER_BYTES = 44;

/** The PCM as it came, behind a WAV header; at most `maxBytes` of it. */
async function writePcmWav(pcm: AsyncIterable<Buffer>, file: string, maxBytes: number) {
  const handle = await open(file, "w");
  let bytes = 0;
  try {
    await handle.write(Buffer.alloc(WAV_HEADER_BYTES), 0, WAV_HEADER_BYTES, 0);
    for await (const chunk of pcm) {
      if (bytes + chunk.length > maxBytes)
        throw new LiveAudioError("rejected", "the live audio is longer than the duration cap");
      await handle.write(chunk, 0, chunk.length, WAV_HEADER_BYTES + bytes);
      bytes += chunk.length;
    }
    await handle.write(speechWavHeader(bytes), 0, WAV_HEADER_BYTES, 0);
  } finally {
    await handle.close();
  }
  return { bytes };
}

/**
 * The server's copy of a live recording: 16 kHz mono s16le PCM → the key's container. Null when no audio
 * arrived (the recording then waits for the browser's upload).
 */
export async function encodeLivePcm(args: {
  pcm: AsyncIterable<Buffer>;
  container: LiveContainer;
  dir: string;
  maxSeconds: number;
}): Promise<AudioFile | null> {
  const file = path.join(args.dir, `live.${args.container}`);
  const input = ["-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "pipe:0"];
  const maxBytes = args.maxSeconds * LIVE_PCM_BYTES_PER_SECOND;
  const { bytes } =
    args.container === "wav"
      ? await writePcmWav(args.pcm, file, maxBytes)
      : await ffmpegFromStream(
          [...QUIET, ...input, ...ENCODE_ARGS[args.container], `file:${file}`],
          args.pcm,
          maxBytes,
        );
  if (bytes < 2) return null;
  const { size } = await stat(file);
  return { file, sizeBytes: size, durationSeconds: Math.floor(bytes / 2) / 16_000 };
}

type ProbeOutput = {
  format?: { format_name?: string; duration?: string };
  streams?: Array<{
    codec_type?: string;
    codec_name?: string;
    sample_rate?: string;
    nb_read_frames?: string;
    nb_read_packets?: string;
  }>;
};

async function ffprobe(file: string, extra: string[]) {
  let run;
  try {
    run = await runProgram(
      DEFAULT_FFPROBE_PATH,
      [
        "-hide_banner",
        "-v",
        "error",
        "-protocol_whitelist",
        "file",
        "-print_format",
        "json",
        "-show_format",
        "-show_streams",
        ...extra,
        `file:${path.resolve(file)}`,
      ],
      PROBE_TIMEOUT_MS,
    );
  } catch (error) {
    if (error instanceof MediaProbeError && error.reason === "unavailable")
      throw new LiveAudioError("failed", "no ffprobe");
    throw new LiveAudioError("rejected", error instanceof Error ? error.message : "ffprobe failed");
  }
  if (run.code !== 0) throw new LiveAudioError("rejected", `ffprobe exited with ${run.code}`);
  try {
    return JSON.parse(run.stdout) as ProbeOutput;
  } catch {
    throw new LiveAudioError("rejected", "ffprobe printed no JSON");
  }
}

async function readHead(file: string) {
  const handle = await open(file, "r");
  try {
    const buffer = new Uint8Array(64);
    const { bytesRead } = await handle.read(buffer, 0, 64, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * The browser's upload must be audio of a recorder format: magic bytes first (text, PDFs, HTML never reach
 * ffprobe), then ffprobe decoding the first 30 s — Opus/Vorbis in WebM or Ogg, AAC in MP4, MP3, PCM in WAV,
 * at a sample rate within `SAMPLE_RATE_RANGE`, and no picture.
 */
export async function inspectLiveUpload(file: string): Promise<{ family: SniffedFamily; codec: string }> {
  const family = sniffLiveAudio(await readHead(file));
  if (!family) throw new LiveAudioError("rejected", "not a recorder format");
  const output = await ffprobe(file, ["-count_frames", "-count_packets", "-read_intervals", "%+30"]);
  const streams = output.streams ?? [];
  if (streams.some((s) => s.codec_type === "video")) throw new LiveAudioError("rejected", "has a video stream");
  const audio = streams.find((s) => s.codec_type === "audio");
  const codec = audio?.codec_name ?? "";
  const formats = (output.format?.format_name ?? "").split(",");
  if (!audio || !acceptedCodec(family, formats, codec)) {
    throw new LiveAudioError("rejected", `codec "${codec}" in "${output.format?.format_name}"`);
  }
  // Real audio decodes (nearly) every packet; noise behind a header decodes none.
  const decoded = Number(audio.nb_read_frames) || 0;
  const packets = Number(audio.nb_read_packets) || 0;
  if (decoded === 0 || decoded * 2 < packets) throw new LiveAudioError("rejected", "nothing decodes");
  // A header may claim any rate: at 4 Hz, 64 KB of WAV "last" two hours, and ffmpeg would encode all of them.
  const rate = Number(audio.sample_rate) || 0;
  if (rate < SAMPLE_RATE_RANGE.min || rate > SAMPLE_RATE_RANGE.max) {
    throw new LiveAudioError("rejected", `sample rate ${rate} Hz`);
  }
  return { family, codec };
}

/** The stored file's duration as its (clean) header says. */
export async function probeDuration(file: string) {
  const output = await ffprobe(file, []);
  const duration = Number(output.format?.duration);
  if (!Number.isFinite(duration) || duration <= 0) throw new LiveAudioError("rejected", "no duration");
  return duration;
}

/** Rewrites an accepted upload into the key's container: a remux when the codec fits, else an encode. */
export async function convertLiveUpload(args: {
  input: string;
  codec: string;
  container: LiveContainer;
  dir: string;
  maxSeconds: number;
}): Promise<AudioFile> {
  const file = path.join(args.dir, `clean.${args.container}`);
  const output = copiesInto(args.container, args.codec)
    ? ["-c:a", "copy", ...MUXER[args.container]]
    : ENCODE_ARGS[args.container];
  let run;
  try {
    run = await runProgram(
      DEFAULT_FFMPEG_PATH,
      [
        ...QUIET,
        "-protocol_whitelist",
        "file",
        "-i",
        `file:${path.resolve(args.input)}`,
        "-t",
        String(Math.ceil(args.maxSeconds) + 1),
        "-map",
        "0:a:0",
        "-vn",
        "-sn",
        "-dn",
        "-map_metadata",
        "-1",
        ...output,
        `file:${file}`,
      ],
      FFMPEG_TIMEOUT_MS,
    );
  } catch (error) {
    throw new LiveAudioError("failed", error instanceof Error ? error.message : "ffmpeg failed");
  }
  if (run.code !== 0) throw new LiveAudioError("rejected", `ffmpeg could not convert: ${run.stderr.slice(-300)}`);
  const durationSeconds = await probeDuration(file);
  if (durationSeconds > args.maxSeconds) throw new LiveAudioError("rejected", "longer than the duration cap");
  const { size } = await stat(file);
  return { file, sizeBytes: size, durationSeconds };
}
