import {
  deleteLettersOfRecording,
  deleteRecordingRow,
  listAudioPastRetention,
  listReleasedBefore,
  listStaleUploadSlots,
  markAudioDeleted,
  updateRecording,
} from "~/models/recording.server";
import { deleteContextUploadByKey, listStaleContextUploads } from "~/models/context-upload.server";
import { isLiveRecording } from "~/models/live-recording.server";
import { auditRecording } from "../audit/events.server";
import { getConfig } from "../config/config.server";
import { liveUploadKey } from "../live/save-upload.server";
import { requireAudio, requireRecording } from "./recordings.server";
import { getStorage } from "../storage/storage.server";
import { stopLetterJob } from "../letters/job.server";
import { stopTranscription } from "../transcription/job.server";
import { removeTranscription } from "../transcription/transcripts.server";

// Removing recordings: delete (everything goes), reset (transcript and letters go, the audio stays) and
// the daily sweep of uploads never finished. Nothing is left orphaned in the database or in storage.

/**
 * Delete and reset stop the recording's jobs before they remove its objects. Storage is asked first, so that with
 * it down they stop before anything changed — not with the jobs gone and the recording "processing" for ever.
 */
async function storageAnswers(key: string) {
  await getStorage().head(key);
}

/** Delete: the audio, its transcript, its letters and its context; nothing orphaned. */
export async function deleteAll(args: { userId: string; key: string }) {
  const found = await requireRecording(args.userId, args.key);
  await storageAnswers(found.storage_key);
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
export async function forceCleanup(args: { userId: string; key: string }) {
  // Starting over needs the audio to transcribe again: refused once the retention sweep deleted it.
  const recording = await requireAudio(args.userId, args.key);
  await storageAnswers(recording.storage_key);
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

/** When the sweep deletes the audio of a recording whose letter was released then; null when audio is kept. */
export function audioDeletionDate(releasedAt: Date): Date | null {
  const retentionMs = getConfig().audioRetentionMs;
  return retentionMs === null ? null : new Date(releasedAt.getTime() + retentionMs);
}

/**
 * Audio retention (AUDIO_RETENTION_DAYS, default 30; issues 9 and 22): the configured period after the doctor
 * released a recording's letter ("Freigegeben"), its audio goes — objects first, then the mark — and the transcript
 * and letter stay. Audited without content, one row per recording and one with the sweep's count. Nothing happens
 * with a period of 0.
 */
export async function deleteAudioPastRetention(now = new Date()) {
  const retentionMs = getConfig().audioRetentionMs;
  if (retentionMs === null) return { audio: 0 };
  const storage = getStorage();
  const due = await listAudioPastRetention({ before: new Date(now.getTime() - retentionMs) });
  for (const recording of due) {
    await storage.delete(recording.storage_key);
    if (isLiveRecording(recording)) await storage.delete(liveUploadKey(recording.storage_key));
    await markAudioDeleted({ ownerId: recording.owner_id, id: recording.id, at: now });
    await auditRecording(undefined, recording.owner_id, "recording.audio-retention", recording.id);
  }
  return { audio: due.length };
}

/**
 * Transcript and letter retention (TRANSCRIPT_RETENTION_DAYS, LETTER_RETENTION_DAYS; default kept; issue 22), both
 * counted from the letter's release. A transcript past its period goes as delete-transcript removes it; a letter past
 * its period takes its whole recording with it (audio and transcript too, whatever their own periods), since the
 * release it was counted from goes with the letter.
 */
async function deleteTextsPastRetention(now: Date) {
  const { transcriptRetentionMs, letterRetentionMs } = getConfig();
  let letters = 0;
  if (letterRetentionMs !== null) {
    for (const recording of await listReleasedBefore({ before: new Date(now.getTime() - letterRetentionMs) })) {
      await deleteAll({ userId: recording.owner_id, key: recording.storage_key });
      await auditRecording(undefined, recording.owner_id, "recording.letter-retention", recording.id);
      letters += 1;
    }
  }
  let transcripts = 0;
  if (transcriptRetentionMs !== null) {
    const before = new Date(now.getTime() - transcriptRetentionMs);
    for (const recording of await listReleasedBefore({ before, withTranscript: true })) {
      await removeTranscription({ userId: recording.owner_id, recordingId: recording.id });
      await auditRecording(undefined, recording.owner_id, "recording.transcript-retention", recording.id);
      transcripts += 1;
    }
  }
  return { transcripts, letters };
}

/**
 * The retention sweep: audio, transcripts and letters past their periods. The admin's audit view gets one row saying
 * how many of each went — counts, never content.
 */
export async function deletePastRetention(now = new Date()) {
  const { letters, transcripts } = await deleteTextsPastRetention(now);
  const { audio } = await deleteAudioPastRetention(now);
  const counts = { audio, transcripts, letters };
  if (audio + transcripts + letters > 0)
    await auditRecording(
      undefined,
      null,
      "retention.sweep",
      `audio:${audio} transcripts:${transcripts} letters:${letters}`,
    );
  return counts;
}
