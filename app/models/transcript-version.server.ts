import type { Kysely, Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database, TranscriptVersionKind } from "./schema";

// Transcript versions (migration 0017): the doctor's changes to a recognised transcript, one row each, scoped by owner
// (STYLE.md §2). Version 1 is the recognised transcript itself (the stored object, no row).

type Db = Kysely<Database> | Transaction<Database>;

export const RECOGNISED_VERSION = 1;

/** The transcript row, locked for one change: concurrent changes to one transcript take turns. */
export async function lockTranscript(trx: Transaction<Database>, { ownerId, id }: { ownerId: string; id: string }) {
  return trx
    .selectFrom("transcripts")
    .where("owner_id", "=", ownerId)
    .where("id", "=", id)
    .select(["id"])
    .forUpdate()
    .executeTakeFirst();
}

export async function listTranscriptVersions(
  { ownerId, transcriptId }: { ownerId: string; transcriptId: string },
  db: Db = getDb(),
) {
  return db
    .selectFrom("transcript_versions")
    .where("owner_id", "=", ownerId)
    .where("transcript_id", "=", transcriptId)
    .select(["version", "kind", "change", "author_id", "created_at"])
    .orderBy("version", "asc")
    .execute();
}

export async function insertTranscriptVersion(
  trx: Transaction<Database>,
  values: {
    ownerId: string;
    transcriptId: string;
    version: number;
    kind: TranscriptVersionKind;
    change: unknown;
    authorId: string;
  },
) {
  await trx
    .insertInto("transcript_versions")
    .values({
      owner_id: values.ownerId,
      transcript_id: values.transcriptId,
      version: values.version,
      kind: values.kind,
      change: JSON.stringify(values.change),
      author_id: values.authorId,
    })
    .execute();
}
