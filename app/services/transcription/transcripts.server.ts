import { deleteTranscriptRow, findTranscriptByKey } from "~/models/transcript.server";
import { listTranscriptVersions, RECOGNISED_VERSION } from "~/models/transcript-version.server";
import { deleteJobOfRecording, lockRecording, setTranscriptionState } from "~/models/transcription.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import type { TranscriptDocument } from "../speech/transcript-format";
import { getStorage } from "../storage/storage.server";
import { cancelTranscription } from "./job.server";
import { applyChanges, type TranscriptChange } from "./corrections";

// A recording's transcript, for its owner (SPEC §7 transcript_v2, delete-transcript): read from storage by
// its key, or removed with the recording's job, which returns the recording to "pending".

/** The key as the doors read it: a path's splat ("" when missing), a body's through requiredKey with this message. */
function transcriptKeyFrom(key: string) {
  const value = key.trim().replace(/^\/+/, "");
  if (!value) throw new DomainError("invalid", "transcriptions:errors.transcriptKeyRequired");
  // SPEC: the client strips the leading "transcripts/"; both forms are accepted.
  return value.startsWith("transcripts/") ? value : `transcripts/${value}`;
}

async function requireTranscript(userId: string, key: string) {
  const row = await findTranscriptByKey({ ownerId: userId, key: transcriptKeyFrom(key) });
  if (!row) throw new DomainError("not_found", "transcriptions:errors.transcriptNotFound");
  return row;
}

/**
 * SPEC §7 transcript_v2/{key}: the transcript, for its owner, as corrected (issue 24, ADR 0031): the recognised one
 * (the stored object, never changed) with the doctor's versions applied. Letters, refinement and the viewer read this.
 */
export async function getTranscript(args: { userId: string; key: string }) {
  const row = await requireTranscript(args.userId, args.key);
  const stream = await getStorage().getStream(row.storage_key);
  if (!stream) throw new DomainError("not_found", "transcriptions:errors.transcriptNotFound");
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  const recognised = JSON.parse(Buffer.concat(chunks).toString("utf8")) as TranscriptDocument;
  const versions = await listTranscriptVersions({ ownerId: args.userId, transcriptId: row.id });
  const document = applyChanges(
    recognised,
    versions.map((v) => v.change as TranscriptChange),
  );
  return { row, document, recognised, version: versions.at(-1)?.version ?? RECOGNISED_VERSION };
}

/**
 * Removes a recording's transcript and job (delete-transcript, reset) and stops any run, in one
 * transaction on the locked recording; the recording returns to "pending". True when there was a transcript.
 */
export async function removeTranscription(args: { userId: string; recordingId: string }) {
  const ids = { ownerId: args.userId, recordingId: args.recordingId };
  cancelTranscription(args.recordingId);
  const { rows, key } = await getDb()
    .transaction()
    .execute(async (trx) => {
      const locked = await lockRecording(trx, ids);
      const count = await deleteTranscriptRow(trx, ids);
      await deleteJobOfRecording(trx, ids);
      await setTranscriptionState(trx, { ...ids, status: "pending", transcriptKey: null });
      return { rows: count, key: locked?.transcript_key ?? null };
    });
  if (key) await getStorage().delete(key);
  return rows > 0 || key !== null;
}

/** SPEC §7 delete-transcript: the transcript goes, the recording returns to "pending". */
export async function deleteTranscript(args: { userId: string; transcriptKey: string }) {
  const row = await requireTranscript(args.userId, args.transcriptKey);
  // The recording names the same object as the row: both are set in one transaction (settle).
  await removeTranscription({ userId: args.userId, recordingId: row.recording_id });
  return { success: true as const };
}
