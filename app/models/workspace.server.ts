import { sql } from "kysely";
import { keptForOwner } from "./owner-cache.server";
import { getDb } from "~/models/db.server";

/** Sidebar counts of SPEC §2, scoped to the owner: one statement (every page of the workspace asks for them). */
export async function getSectionCounts({ ownerId }: { ownerId: string }) {
  return keptForOwner(ownerId, "sectionCounts", [], () => countsOf(ownerId));
}

function countsOf(ownerId: string) {
  const db = getDb();
  const recordings = db
    .selectFrom("recordings")
    .where("owner_id", "=", ownerId)
    .where("upload_status", "=", "ready")
    .select([
      sql<number>`count(*)::int`.as("audio"),
      sql<number>`(count(*) filter (where transcription_status = 'completed' and transcript_key is not null))::int`.as(
        "transcriptions",
      ),
    ])
    .as("recordings");
  return db
    .selectFrom(recordings)
    .select([
      "recordings.audio",
      "recordings.transcriptions",
      (eb) =>
        eb
          .selectFrom("letters")
          .where("owner_id", "=", ownerId)
          .select(sql<number>`count(*)::int`.as("n"))
          .$asScalar()
          .as("arztbriefe"),
    ])
    .executeTakeFirstOrThrow();
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
