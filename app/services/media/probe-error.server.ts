// The one error of the audio checks, whoever raised it: the in-process decoders (media-wav, media-mp3,
// media-decode) for uploads, and the ffprobe/ffmpeg runner that the live path still uses.

export type ProbeErrorReason =
  /** A program (ffprobe, ffmpeg) or the decoder itself could not be started: a server fault, not the file's. */
  | "unavailable"
  /** The check ran longer than its time-out. */
  | "timeout"
  /** The bytes are not a container that can be opened (broken header, truncated before any audio). */
  | "failed"
  /** ffprobe's output was not the JSON expected (or was too large). */
  | "invalid_output"
  /** The media opened but is not usable audio: no audio stream, no duration, nothing decodable. */
  | "not_audio";

export class MediaProbeError extends Error {
  constructor(
    readonly reason: ProbeErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "MediaProbeError";
  }
}
