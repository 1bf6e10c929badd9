import type { Transaction } from "kysely";
import {
  findLiveRecording,
  findLiveRecordingByFingerprint,
  insertLiveContextText,
  insertLiveRecording,
  lockSaveFingerprint,
  setLiveAudio,
  type NewLiveRecording,
} from "~/models/live-recording.server";
import type { Database } from "~/models/schema";
import type { LiveContainer } from "./save-format.server";

// The rows of a saved live recording, in the save's terms (containers, audio files); the queries, owner-scoped,
// are in ~/models/live-recording.server.ts. A live recording is told apart by created_via 'realtime'; its
// audio_format is the container of the audio the server stored, as an upload's is the format it checked.

export {
  findLiveRecording as findRealtimeRecording,
  findLiveRecordingByFingerprint as findSavedByFingerprint,
  insertLiveContextText as insertContextText,
  lockSaveFingerprint as lockFingerprint,
};

export async function insertRealtimeRecording(
  trx: Transaction<Database>,
  values: Omit<NewLiveRecording, "audio"> & {
    container: LiveContainer;
    audio: { sizeBytes: number; durationSeconds: number } | null;
  },
) {
  const { container, audio, ...rest } = values;
  return insertLiveRecording(trx, { ...rest, audio: audio && { ...audio, format: container } });
}

/** The browser's copy (converted into the key's container) replaced the audio. */
export async function markRealtimeAudioReady(args: {
  ownerId: string;
  id: string;
  container: LiveContainer;
  sizeBytes: number;
  durationSeconds: number;
}) {
  const { container, ...rest } = args;
  await setLiveAudio({ ...rest, format: container });
}
