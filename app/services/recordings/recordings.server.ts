import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  addRecordingContext,
  deleteRecordingRow,
  findRecordingByKey,
  insertUploadSlot,
  listReadyRecordings,
  updateRecording,
} from "~/models/recording.server";
import { isLiveRecording, LIVE_CREATED_VIA, LIVE_SOURCE_TYPE } from "~/models/live-recording.server";
import { readConsent } from "~/models/consent-rules";
import { checkAdditionalContext, sanitiseFileName } from "~/models/recording-rules";
import { templateLanguageFrom } from "~/models/template-rules";
import { scanUploadedFile } from "../antivirus/antivirus.server";
import { confirmConsent } from "./consent.server";
import { DomainError } from "../web/domain-error.server";
import {
  ACCEPTED_AUDIO_TYPES,
  EMPTY_FILE_MESSAGE,
  MAX_AUDIO_BYTES,
  tooLargeMessage,
  validateAudioFile,
} from "../media/probe.server";
import { localiseAudioMessage } from "../media/messages.server";
import { hitRateLimit } from "../web/rate-limit.server";
import { assertWellFormedKey, getStorage, makeStorageKey } from "../storage/storage.server";

// Recordings: upload slots with short-lived URLs, the server's check of the
// stored bytes, the files list (metadata, names and tags: recording-metadata; delete and reset: recording-removal). The
// client never names a key it does not own: every call finds the recording by
// (owner, key), and anything else is a 404 before storage is touched.

export const MAX_DURATION_SECONDS = 4 * 60 * 60;

/** A rejected upload, with the audio check's message as a translatable key. */
export function audioRejected(message: string) {
  const { key, values } = localiseAudioMessage(message);
  return new DomainError("invalid", key, [], values);
}

export async function requireRecording(ownerId: string, key: string) {
  if (!key.trim()) throw new DomainError("invalid", "recordings:errors.fileKeyRequired");
  const recording = await findRecordingByKey({ ownerId, key: key.trim() });
  if (!recording) throw new DomainError("not_found", "recordings:errors.recordingNotFound");
  return recording;
}

export type SlotRequest = {
  userId: string;
  fileName: unknown;
  fileType: unknown;
  languageCode: unknown;
  additionalContext?: unknown;
  /** The JSON API's `consent` ({ kind, given_by }), unchecked. */
  consent?: unknown;
};

/** The checks and the server-made key every upload slot starts with. */
export function planSlot(args: SlotRequest) {
  const type = typeof args.fileType === "string" ? args.fileType.trim().toLowerCase() : "";
  if (!(ACCEPTED_AUDIO_TYPES as readonly string[]).includes(type)) {
    throw new DomainError("invalid", "recordings:errors.unsupportedType", [], { type: type || "unknown" });
  }
  const context = checkAdditionalContext(args.additionalContext);
  if (!context.ok) throw new DomainError("invalid", context.message);
  // Before any audio is accepted: the patient's consent, required where the operator says so.
  const consent = confirmConsent(args.userId, readConsent(args.consent));
  const language = templateLanguageFrom(typeof args.languageCode === "string" ? args.languageCode : null) ?? "de-DE";
  const key = makeStorageKey({
    ownerId: args.userId,
    area: "audio",
    extension: type === "audio/mpeg" ? ".mp3" : ".wav",
  });
  return {
    type,
    key,
    language,
    context: context.value,
    consent,
    originalFilename: sanitiseFileName(args.fileName),
  };
}

/**
 * Upload slots per user and hour, on every upload path: each upload is stored, probed and transcribed. Counted per
 * user, never per address, so clinicians behind one hospital NAT are never throttled together.
 */
export const UPLOADS_PER_HOUR = 200;

/** Records the slot (and its context) for a planned upload. */
export async function insertSlot(
  userId: string,
  plan: ReturnType<typeof planSlot>,
  multipart?: Parameters<typeof insertUploadSlot>[0]["multipart"],
) {
  const verdict = await hitRateLimit({
    bucket: `upload:${userId}`,
    limit: UPLOADS_PER_HOUR,
    windowSeconds: 3600,
    userId,
  });
  if (!verdict.allowed) throw new DomainError("rate_limited", "recordings:errors.tooManyRequests");
  const { id } = await insertUploadSlot({
    ownerId: userId,
    key: plan.key,
    originalFilename: plan.originalFilename,
    languageCode: plan.language,
    declaredType: plan.type,
    multipart,
    consent: plan.consent,
  });
  if (plan.context) {
    await addRecordingContext({ ownerId: userId, recordingId: id, kind: "text", text: plan.context });
  }
  return { id, contextUploaded: Boolean(plan.context) };
}

/** SPEC §7 get-upload-url: a slot, a short-lived PUT URL, and the context if any. */
export async function createUploadSlot(args: SlotRequest) {
  const plan = planSlot(args);
  const { id, contextUploaded } = await insertSlot(args.userId, plan);
  const upload = await getStorage().createUploadUrl({ key: plan.key, contentType: plan.type });
  return { url: upload.url, headers: upload.headers, key: plan.key, record_id: id, context_uploaded: contextUploaded };
}

/**
 * The server's own check of what arrived (issue 4): size on the stored object,
 * the virus scan (ADR 0024), magic bytes, a probe of the media, the duration cap. A rejected upload loses
 * its object and its slot, and the caller hears the SPEC message.
 */
export async function confirmUpload({ userId, key }: { userId: string; key: string }) {
  const recording = await requireRecording(userId, key);
  // A live recording's audio is made or checked on its own path (the server's copy, confirm-realtime-audio),
  // in recorder formats; one still waiting for it holds a transcript, so the upload check must not reject it.
  if (recording.upload_status === "ready" || isLiveRecording(recording)) return recording;
  const storage = getStorage();
  const head = await storage.head(recording.storage_key);
  if (!head) throw new DomainError("invalid", "recordings:errors.notUploadedYet");
  // The stored object's own size decides, before a byte of it is read.
  const early = head.size === 0 ? EMPTY_FILE_MESSAGE : head.size > MAX_AUDIO_BYTES ? tooLargeMessage(head.size) : null;
  if (early) {
    await rejectUpload(userId, recording.id, recording.storage_key);
    throw audioRejected(early);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-probe-"));
  const file = path.join(dir, "upload");
  try {
    const stream = await storage.getStream(recording.storage_key);
    if (!stream) throw new DomainError("invalid", "recordings:errors.notUploadedYet");
    await pipeline(stream as Readable, fs.createWriteStream(file));
    // Scanned before ffprobe reads a byte of it; a refusal (or no answer) loses the object and the slot.
    const subject = {
      userId,
      name: recording.original_filename,
      entityType: "recording" as const,
      entityId: recording.id,
    };
    await scanUploadedFile(subject, file).catch(async (error: unknown) => {
      await rejectUpload(userId, recording.id, recording.storage_key);
      throw error;
    });
    const result = await validateAudioFile(file, {
      declaredType: recording.declared_type ?? undefined,
      maxDurationSeconds: MAX_DURATION_SECONDS,
    });
    if (!result.ok) {
      await rejectUpload(userId, recording.id, recording.storage_key);
      throw audioRejected(result.rejection.message);
    }
    await updateRecording({
      ownerId: userId,
      id: recording.id,
      set: {
        upload_status: "ready",
        size_bytes: head.size,
        duration_seconds: result.probe.durationSeconds,
        audio_format: result.sniffed,
      },
    });
    return { ...recording, upload_status: "ready" as const };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The local store refused a PUT as too large (413): the slot it was for can never be confirmed, so it goes now
 * rather than with the daily sweep — only an unconfirmed upload's slot, found by its exact key under the owner the
 * key names (a live recording's staging upload leaves its recording alone).
 */
export async function discardOversizeSlot(key: string) {
  if (!key.startsWith("audio/")) return;
  const ownerId = assertWellFormedKey(key);
  const recording = await findRecordingByKey({ ownerId, key });
  // An earlier PUT to the same URL may have stored an object: it goes with the slot (rejectUpload).
  if (recording?.upload_status === "awaiting_upload" && !isLiveRecording(recording))
    await rejectUpload(ownerId, recording.id, key);
}

async function rejectUpload(userId: string, id: string, key: string) {
  await getStorage().delete(key);
  await deleteRecordingRow({ ownerId: userId, id });
}

/** SPEC §3 "Audio file record" for the files list. */
export async function listFiles({ userId }: { userId: string }) {
  const rows = await listReadyRecordings({ ownerId: userId });
  return rows.map((r) => ({
    key: r.storage_key,
    filename: r.original_filename,
    uploadDate: r.created_at.toISOString(),
    transcriptionStatus: r.transcription_status,
    metadata: {
      template_id: r.template_id,
      language_code: r.language_code,
      tags: r.tags,
      display_name: r.display_name,
      source_file_display_name: r.display_name,
      job_name: null,
      transcript_key: r.transcript_key,
      medical_letter_key: r.letter_key,
      medical_letter_status: r.medical_letter_status,
      source_key: r.storage_key,
      original_filename: r.original_filename,
      transcription_mode: r.transcription_mode,
      // SPEC §3 "Live-recording audio metadata", on live recordings only: an upload's answer stays as it was.
      ...(isLiveRecording(r) && {
        created_via: LIVE_CREATED_VIA,
        source_type: LIVE_SOURCE_TYPE,
        is_realtime: "true",
        transcription_status: r.transcription_status,
        original_mime_type: r.original_mime_type,
        duration: r.duration_seconds,
      }),
    },
  }));
}

export async function requireReady(userId: string, key: string) {
  const recording = await requireRecording(userId, key);
  if (recording.upload_status !== "ready") throw new DomainError("not_found", "recordings:errors.recordingNotFound");
  return recording;
}

/** A ready recording whose audio is still stored (the retention sweep may have deleted it; issue 9). */
export async function requireAudio(userId: string, key: string) {
  const recording = await requireReady(userId, key);
  return withAudio(recording);
}

/**
 * Like requireAudio, for a caller that may come straight after the PUT (transcribe_v2 without update-file-metadata
 * first): an upload not checked yet is checked now (confirmUpload), a refused one answers its SPEC message, and an
 * own recording whose audio has not arrived is "not uploaded yet", never a 404.
 */
export async function confirmAudio(userId: string, key: string) {
  const recording = await confirmUpload({ userId, key });
  // A live recording still waiting for the browser's copy of its audio (confirmUpload leaves it alone).
  if (recording.upload_status !== "ready") throw new DomainError("invalid", "recordings:errors.notUploadedYet");
  return withAudio(recording);
}

/** The recording, unless the retention sweep deleted its audio. */
export function withAudio<T extends { audio_deleted_at: Date | null }>(recording: T) {
  if (recording.audio_deleted_at) throw new DomainError("not_found", "recordings:errors.audioDeleted");
  return recording;
}
