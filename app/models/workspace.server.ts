import { sql } from "kysely";
import { getDb } from "~/models/db.server";

/** Sidebar counts of SPEC §2, scoped to the owner. */
export async function getSectionCounts({ ownerId }: { ownerId: string }) {
  const db = getDb();
  const recordings = await db
    .selectFrom("recordings")
    .where("owner_id", "=", ownerId)
    .where("upload_status", "=", "ready")
    .select([
      sql<number>`count(*)::int`.as("audio"),
      sql<number>`(count(*) filter (where transcription_status = 'completed' and transcript_key is not null))::int`.as(
        "transcriptions",
      ),
    ])
    .executeTakeFirstOrThrow();
  const letters = await db
    .selectFrom("letters")
    .where("owner_id", "=", ownerId)
    .select(sql<number>`count(*)::int`.as("arztbriefe"))
    .executeTakeFirstOrThrow();
  return { audio: recordings.audio, transcriptions: recordings.transcriptions, arztbriefe: letters.arztbriefe };
}

export async function listLetters({ ownerId }: { ownerId: string }) {
  return getDb()
    .selectFrom("letters")
    .leftJoin("recordings", (join) =>
      join.onRef("recordings.id", "=", "letters.recording_id").on("recordings.owner_id", "=", ownerId),
    )
    .where("letters.owner_id", "=", ownerId)
    .select(["letters.id", "letters.created_at", "recordings.original_filename", "recordings.display_name"])
    .orderBy("letters.created_at", "desc")
    .execute();
}
