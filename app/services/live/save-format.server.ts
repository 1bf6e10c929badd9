import { sniffAudioType } from "../media/sniff.server";

// The audio containers of a live recording (SPEC §9 "Recorder MIME preference"): the recorder's MIME type picks
// the storage key's extension — webm, m4a (from mp4), mp3 (from mpeg), wav, default webm — and the server keeps
// the recording's audio in exactly that container, whether it made the file from the streamed PCM or from the
// browser's own copy. Pure functions; ffmpeg lives in save-audio.server.ts.

export type LiveContainer = "webm" | "m4a" | "mp3" | "wav";

/** What the browser may PUT on the live upload path (with or without codecs parameters). */
export const LIVE_UPLOAD_BASE_TYPES = ["audio/webm", "audio/ogg", "audio/mp4", "audio/mpeg", "audio/wav"] as const;

// type "/" subtype, optional parameters: the same shape the storage layer signs (storage/keys.server.ts).
const MIME_PATTERN =
  /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\s*;\s*[A-Za-z0-9_-]+=("[A-Za-z0-9 ._-]*"|[A-Za-z0-9._-]+))*$/;
export const MAX_MIME_LENGTH = 100;

export function isWellFormedMime(value: string) {
  return value.length <= MAX_MIME_LENGTH && MIME_PATTERN.test(value);
}

export function baseMime(value: string) {
  return value.split(";")[0]!.trim().toLowerCase();
}

/** SPEC §9: the key's extension from the recorder's MIME type. */
export function containerForMime(mime: string | null | undefined): LiveContainer {
  const base = mime ? baseMime(mime) : "";
  // Chromium labels WebM and MP4 recordings video/* even without a picture (STACK-NOTES pitfall 10).
  if (base === "audio/mp4" || base === "video/mp4" || base === "audio/x-m4a") return "m4a";
  if (base === "audio/mpeg") return "mp3";
  if (base === "audio/wav" || base === "audio/x-wav" || base === "audio/wave") return "wav";
  return "webm";
}

export const CONTAINER_CONTENT_TYPE: Record<LiveContainer, string> = {
  webm: "audio/webm",
  m4a: "audio/mp4",
  mp3: "audio/mpeg",
  wav: "audio/wav",
};

export function containerOfKey(key: string): LiveContainer {
  const extension = /\.([a-z0-9]+)$/.exec(key)?.[1];
  return extension === "m4a" || extension === "mp3" || extension === "wav" ? extension : "webm";
}

/** A recorder format accepted on the live upload path only (the normal upload stays MP3/WAV). */
export function isLiveUploadType(value: string) {
  if (!isWellFormedMime(value)) return false;
  const base = baseMime(value);
  return (LIVE_UPLOAD_BASE_TYPES as readonly string[]).includes(base === "audio/x-wav" ? "audio/wav" : base);
}

export type SniffedFamily = "matroska" | "ogg" | "mp4" | "mp3" | "wav";

function ascii(head: Uint8Array, offset: number, text: string) {
  if (head.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) if (head[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** Magic bytes of the recorder formats, so text, PDFs or HTML never reach ffprobe. */
export function sniffLiveAudio(head: Uint8Array): SniffedFamily | null {
  if (head.length >= 4 && head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) {
    return "matroska";
  }
  if (ascii(head, 0, "OggS")) return "ogg";
  if (ascii(head, 4, "ftyp")) return "mp4";
  return sniffAudioType(head);
}

/**
 * What ffprobe must find for each family (issue 7): Opus or Vorbis in WebM/Ogg, AAC in MP4, MP3, PCM in WAV.
 * `formatNames` is ffprobe's comma-separated format_name.
 */
export function acceptedCodec(family: SniffedFamily, formatNames: string[], codec: string) {
  switch (family) {
    case "matroska":
      return formatNames.includes("matroska") && (codec === "opus" || codec === "vorbis");
    case "ogg":
      return formatNames.includes("ogg") && (codec === "opus" || codec === "vorbis");
    case "mp4":
      return formatNames.includes("mp4") && codec === "aac";
    case "mp3":
      return formatNames.includes("mp3") && codec === "mp3";
    case "wav":
      return formatNames.includes("wav") && /^pcm_[suf]\d+(le|be)?$/.test(codec);
  }
}

/** A codec that can go into the container unchanged (a remux writes the duration and cues MediaRecorder omits). */
export function copiesInto(container: LiveContainer, codec: string) {
  if (container === "webm") return codec === "opus" || codec === "vorbis";
  if (container === "m4a") return codec === "aac";
  if (container === "mp3") return codec === "mp3";
  return codec === "pcm_s16le";
}

/** ffmpeg output options that encode into each container (speech: mono, modest bitrates). */
export const ENCODE_ARGS: Record<LiveContainer, string[]> = {
  webm: ["-c:a", "libopus", "-b:a", "32k", "-f", "webm"],
  m4a: ["-c:a", "aac", "-b:a", "64k", "-movflags", "+faststart", "-f", "mp4"],
  mp3: ["-c:a", "libmp3lame", "-b:a", "64k", "-f", "mp3"],
  wav: ["-c:a", "pcm_s16le", "-f", "wav"],
};

export const MUXER: Record<LiveContainer, string[]> = {
  webm: ["-f", "webm"],
  m4a: ["-movflags", "+faststart", "-f", "mp4"],
  mp3: ["-f", "mp3"],
  wav: ["-f", "wav"],
};
