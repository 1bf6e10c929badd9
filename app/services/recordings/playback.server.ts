import { requireAudio } from "./recordings.server";
import { getStorage } from "../storage/storage.server";

// Playing a recording: a short-lived URL to its audio, served with the container's own type. Refused with a
// translated reason once the retention sweep deleted the audio (requireAudio).

// Keys are made on the server with the container as extension (an upload's .mp3/.wav, a live recording's
// .webm/.m4a/.mp3/.wav). An upload through a URL gets its key before the bytes arrive, from the type the client
// declared; the server's check then records what the bytes are (audio_format), and that is what the player is told:
// an MP3 sent as audio/wav is kept (the content decides, as on the form) and must play as audio/mpeg.
const PLAYBACK_TYPES: Record<string, string> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  webm: "audio/webm",
  m4a: "audio/mp4",
  ogg: "audio/ogg",
};

export function playbackContentType(key: string) {
  return PLAYBACK_TYPES[/\.([a-z0-9]+)$/.exec(key)?.[1] ?? ""] ?? "application/octet-stream";
}

export async function getPlaybackUrl(args: { userId: string; key: string }) {
  const recording = await requireAudio(args.userId, args.key);
  const contentType = PLAYBACK_TYPES[recording.audio_format ?? ""] ?? playbackContentType(recording.storage_key);
  return getStorage().createDownloadUrl({ key: recording.storage_key, contentType, expiresInSeconds: 300 });
}
