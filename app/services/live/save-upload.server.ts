import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { scanUploadedFile } from "../antivirus/antivirus.server";
import { auditRecording } from "../audit/events.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { autoCreateLetter } from "../letters/letters.server";
import { EMPTY_FILE_MESSAGE, MAX_AUDIO_BYTES, tooLargeMessage } from "../media/probe.server";
import { hitRateLimit } from "../web/rate-limit.server";
import { audioRejected, MAX_DURATION_SECONDS } from "../recordings/recordings.server";
import { getStorage } from "../storage/storage.server";
import { convertLiveUpload, inspectLiveUpload, LiveAudioError } from "./save-audio.server";
import { CONTAINER_CONTENT_TYPE, containerOfKey, isLiveUploadType } from "./save-format.server";
import { findRealtimeRecording, markRealtimeAudioReady } from "./save-rows.server";

// The browser's own copy of a live recording (SPEC §7 get-upload-url, live variant with specific_key). The
// browser PUTs to a staging object next to the recording's audio, never onto it: until the server has checked
// and converted the upload (confirmRealtimeAudio), the audio the server made from the streamed PCM stays, and
// a broken or hostile upload costs nothing.

/** Per user and hour: each confirm converts up to 70 MB with ffmpeg. */
export const LIVE_AUDIO_CONFIRMS_PER_HOUR = 60;

/** The staging object of a live recording's upload: derived from its audio key, so no column is needed. */
export function liveUploadKey(audioKey: string) {
  return `${audioKey}.upload`;
}

/** The key as the door read it (api-fields' requiredKey, with the same message for another type than text). */
async function requireLiveRecording(userId: string, key: string) {
  if (!key.trim()) throw new DomainError("invalid", "recordings:errors.fileKeyRequired");
  const recording = await findRealtimeRecording(getDb(), { ownerId: userId, key: key.trim() });
  // Another user's key, an unknown one and an upload's key look the same: not found.
  if (!recording) throw new DomainError("not_found", "recordings:errors.recordingNotFound");
  return recording;
}

/**
 * SPEC §7 get-upload-url with specific_key: a short-lived URL for the browser's copy of a live recording. The file
 * type stays as sent: an unknown recording is refused before a type that is not a recorder format, whatever it is.
 */
export async function createRealtimeUploadSlot(args: { userId: string; specificKey: string; fileType: unknown }) {
  const recording = await requireLiveRecording(args.userId, args.specificKey);
  const type = typeof args.fileType === "string" ? args.fileType.trim() : "";
  if (!isLiveUploadType(type)) {
    throw new DomainError("invalid", "recordings:liveSave.unsupportedType", [], {
      type: type.slice(0, 100) || "unknown",
    });
  }
  const upload = await getStorage().createUploadUrl({ key: liveUploadKey(recording.storage_key), contentType: type });
  return { url: upload.url, key: recording.storage_key, record_id: recording.id, context_uploaded: false as const };
}

/**
 * After the browser's PUT: the staging object must pass the virus scan and be audio of a recorder format (magic
 * bytes, ffprobe); it is rewritten into a clean file of the key's container and replaces the recording's audio. A
 * rejected upload leaves the audio as it was. In "transcript plus Arztbrief" mode a recording that had no audio yet starts
 * its letter now.
 */
export async function confirmRealtimeAudio(args: { userId: string; key: string; request?: Request }) {
  const recording = await requireLiveRecording(args.userId, args.key);
  const storage = getStorage();
  const staging = liveUploadKey(recording.storage_key);
  const head = await storage.head(staging);
  if (!head) throw new DomainError("invalid", "recordings:errors.notUploadedYet");
  const verdict = await hitRateLimit({
    bucket: `live-audio:${args.userId}`,
    limit: LIVE_AUDIO_CONFIRMS_PER_HOUR,
    windowSeconds: 3600,
    userId: args.userId,
  });
  if (!verdict.allowed) throw new DomainError("rate_limited", "recordings:errors.tooManyRequests");
  const outcome = (value: "success" | "failure") =>
    auditRecording(args.request, args.userId, "recording.live-audio", recording.id, value);
  const early = head.size === 0 ? EMPTY_FILE_MESSAGE : head.size > MAX_AUDIO_BYTES ? tooLargeMessage(head.size) : null;
  if (early) {
    await storage.delete(staging);
    await outcome("failure");
    throw audioRejected(early);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-live-audio-"));
  try {
    const input = path.join(dir, "upload");
    const stream = await storage.getStream(staging);
    if (!stream) throw new DomainError("invalid", "recordings:errors.notUploadedYet");
    await pipeline(stream as Readable, fs.createWriteStream(input));
    // A remux copies the browser's bytes as they are: scanned before ffmpeg reads them (ADR 0024).
    const subject = {
      userId: args.userId,
      name: path.basename(recording.storage_key),
      entityType: "recording" as const,
      entityId: recording.id,
      request: args.request,
    };
    await scanUploadedFile(subject, input).catch(async (error: unknown) => {
      await storage.delete(staging).catch(() => undefined);
      await outcome("failure");
      throw error;
    });
    const container = containerOfKey(recording.storage_key);
    const { codec } = await inspectLiveUpload(input);
    const clean = await convertLiveUpload({ input, codec, container, dir, maxSeconds: MAX_DURATION_SECONDS });
    await storage.putFile({
      key: recording.storage_key,
      path: clean.file,
      contentType: CONTAINER_CONTENT_TYPE[container],
    });
    await storage.delete(staging);
    await markRealtimeAudioReady({
      ownerId: args.userId,
      id: recording.id,
      container,
      sizeBytes: clean.sizeBytes,
      durationSeconds: clean.durationSeconds,
    });
    await outcome("success");
    if (recording.upload_status !== "ready") {
      await autoCreateLetter({
        userId: args.userId,
        recordingId: recording.id,
        sourceKey: recording.storage_key,
        mode: recording.transcription_mode,
      });
    }
    return { success: true as const, key: recording.storage_key, duration_seconds: clean.durationSeconds };
  } catch (error) {
    if (error instanceof DomainError) throw error;
    await storage.delete(staging).catch(() => undefined);
    await outcome("failure");
    const reason = error instanceof Error ? error.message : String(error);
    console.warn("[live-save] browser audio not used:", reason);
    if (error instanceof LiveAudioError && error.kind === "rejected") {
      throw new DomainError("invalid", "recordings:liveSave.audioRejected");
    }
    throw new DomainError("unavailable", "recordings:liveSave.audioFailed");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
