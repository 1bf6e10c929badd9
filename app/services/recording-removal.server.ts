import {
  deleteLettersOfRecording,
  deleteRecordingRow,
  listStaleUploadSlots,
  updateRecording,
} from "~/models/recording.server";
import { deleteContextUploadByKey, listStaleContextUploads } from "~/models/context-upload.server";
import { isLiveRecording } from "~/models/live-recording.server";
import { liveUploadKey } from "./live/save-upload.server";
import { requireReady, requireRecording } from "./recordings.server";
import { getStorage } from "./storage.server";
import { stopLetterJob } from "./letters.server";
import { removeTranscription, stopTranscription } from "./transcription.server";

// Removing recordings: delete (everything goes), reset (transcript and letters go, the audio stays) and
// the daily sweep of uploads never finished. Nothing is left orphaned in the database or in storage.

/** Delete: the audio, its transcript, its letters and its context; nothing orphaned. */
export async function deleteAll(args: { userId: string; key: unknown }) {
  const found = await requireRecording(args.userId, args.key);
  await stopTranscription({ userId: args.userId, recordingId: found.id });
  await stopLetterJob({ userId: args.userId, recordingId: found.id });
  // Read again after the stop: a run that finished just before it left its transcript key here.
  const recording = await requireRecording(args.userId, args.key);
  const storage = getStorage();
  // Letters live in the database (ADR 0012): their rows, with every version, go below.
  const keys = [recording.storage_key, recording.transcript_key].filter((k): k is string => Boolean(k));
  // A live recording may have a browser copy PUT but never confirmed; deleting a missing object is a no-op.
  if (isLiveRecording(recording)) keys.push(liveUploadKey(recording.storage_key));
  if (recording.multipart_upload_id) {
    await storage.abortMultipartUpload({ key: recording.storage_key, uploadId: recording.multipart_upload_id });
  }
  for (const key of keys) await storage.delete(key);
  await deleteLettersOfRecording({ ownerId: args.userId, recordingId: recording.id });
  await deleteRecordingRow({ ownerId: args.userId, id: recording.id }); // context rows cascade
  return { success: true as const };
}

/** Reset (force cleanup): letters and transcript go, the recording starts over. */
export async function forceCleanup(args: { userId: string; key: unknown }) {
  const recording = await requireReady(args.userId, args.key);
  await stopLetterJob({ userId: args.userId, recordingId: recording.id });
  const medicalLettersDeleted = await deleteLettersOfRecording({ ownerId: args.userId, recordingId: recording.id });
  const transcriptDeleted = await removeTranscription({ userId: args.userId, recordingId: recording.id });
  await updateRecording({ ownerId: args.userId, id: recording.id, set: { medical_letter_status: "pending" } });
  return {
    cleanup_results: {
      medical_letters_deleted: medicalLettersDeleted,
      transcript_deleted: transcriptDeleted,
      source_reset: true,
    },
  };
}

const STALE_AFTER_MS = 24 * 3_600_000;

/**
 * Maintenance (not a user action, so not owner-scoped): upload slots never
 * confirmed and context PDFs never read are removed after a day, objects first.
 * Live recordings waiting for the browser's audio are never swept (listStaleUploadSlots).
 */
export async function deleteStaleUploads(now = new Date()) {
  const before = new Date(now.getTime() - STALE_AFTER_MS);
  const storage = getStorage();
  const slots = await listStaleUploadSlots({ before });
  for (const slot of slots) {
    if (slot.multipart_upload_id) {
      await storage.abortMultipartUpload({ key: slot.storage_key, uploadId: slot.multipart_upload_id });
    }
    await storage.delete(slot.storage_key);
    await deleteRecordingRow({ ownerId: slot.owner_id, id: slot.id });
  }
  const pdfs = await listStaleContextUploads({ before });
  for (const pdf of pdfs) {
    await storage.delete(pdf.storage_key);
    await deleteContextUploadByKey({ key: pdf.storage_key });
  }
  return { slots: slots.length, contextPdfs: pdfs.length };
}
