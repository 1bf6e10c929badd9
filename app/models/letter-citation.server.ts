import { sql, type Kysely, type Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database } from "./schema";

// The sources a model named for the wordings it wrote (migration 0022, issue 24), scoped by owner (STYLE.md §2).
// Written in the transaction that stores the letter or proposal the wordings belong to.

type Db = Kysely<Database> | Transaction<Database>;

export async function recordCitations(
  db: Db,
  args: { ownerId: string; letterId: string; citations: Array<{ wordingHash: string; segmentIds: string[] }> },
) {
  if (args.citations.length === 0) return;
  await db
    .insertInto("letter_citations")
    .values(
      args.citations.map((c) => ({
        letter_id: args.letterId,
        owner_id: args.ownerId,
        wording_hash: c.wordingHash,
        segment_ids: JSON.stringify(c.segmentIds),
      })),
    )
    .onConflict((oc) =>
      oc.columns(["letter_id", "wording_hash"]).doUpdateSet({
        segment_ids: sql`excluded.segment_ids`,
        cited_at: sql`now()`,
      }),
    )
    .execute();
}

export async function listCitations(args: { ownerId: string; letterId: string }) {
  return getDb()
    .selectFrom("letter_citations")
    .where("owner_id", "=", args.ownerId)
    .where("letter_id", "=", args.letterId)
    .select(["wording_hash", "segment_ids"])
    .execute();
}
