import type { Kysely, Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database } from "./schema";

// Transcript rows (one per recording; the transcript itself is a stored object under `storage_key`), scoped
// by owner (STYLE.md §2). The jobs that write them are in transcription.server.ts.

type Db = Kysely<Database> | Transaction<Database>;

export async function insertTranscript(
  db: Db,
  values: {
    ownerId: string;
    recordingId: string;
    key: string;
    language: string;
    engine: string;
    audioSeconds: number;
    wordCount: number;
    speakerCount: number;
    tags: string[];
  },
) {
  return db
    .insertInto("transcripts")
    .values({
      owner_id: values.ownerId,
      recording_id: values.recordingId,
      storage_key: values.key,
      language_code: values.language,
      engine: values.engine,
      audio_seconds: values.audioSeconds,
      word_count: values.wordCount,
      speaker_count: values.speakerCount,
      tags: JSON.stringify(values.tags),
    })
    .onConflict((oc) => oc.column("recording_id").doNothing())
    .returning("id")
    .executeTakeFirst();
}

export async function findTranscriptByKey({ ownerId, key }: { ownerId: string; key: string }) {
  return getDb()
    .selectFrom("transcripts")
    .innerJoin("recordings", "recordings.id", "transcripts.recording_id")
    .where("transcripts.owner_id", "=", ownerId)
    .where("transcripts.storage_key", "=", key)
    .select([
      "transcripts.id",
      "transcripts.recording_id",
      "transcripts.storage_key",
      "transcripts.created_at",
      "transcripts.tags",
      "recordings.storage_key as source_key",
      "recordings.original_filename",
      "recordings.display_name",
      "recordings.language_code",
      "recordings.template_id",
    ])
    .executeTakeFirst();
}

export async function deleteTranscriptRow(db: Db, { ownerId, recordingId }: { ownerId: string; recordingId: string }) {
  const result = await db
    .deleteFrom("transcripts")
    .where("owner_id", "=", ownerId)
    .where("recording_id", "=", recordingId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function setTranscriptTags({
  ownerId,
  recordingId,
  tags,
}: {
  ownerId: string;
  recordingId: string;
  tags: string[];
}) {
  await getDb()
    .updateTable("transcripts")
    .set({ tags: JSON.stringify(tags) })
    .where("owner_id", "=", ownerId)
    .where("recording_id", "=", recordingId)
    .execute();
}
