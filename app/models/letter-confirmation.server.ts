import { getDb } from "~/models/db.server";

// A doctor's confirmations of evidence flags (migration 0019, issue 24), scoped by owner (STYLE.md §2). A sentence
// is named by the hash of its wording, so a confirmation lapses by itself when the sentence changes.

export async function listConfirmations(args: { ownerId: string; letterId: string }) {
  return getDb()
    .selectFrom("letter_confirmations")
    .where("owner_id", "=", args.ownerId)
    .where("letter_id", "=", args.letterId)
    .select(["sentence_hash", "flag_kind", "confirmed_at"])
    .execute();
}

/** True when this confirmation is new; confirming the same flag twice leaves the first one. */
export async function insertConfirmation(args: {
  ownerId: string;
  letterId: string;
  sentenceHash: string;
  flagKind: string;
}) {
  const result = await getDb()
    .insertInto("letter_confirmations")
    .values({
      owner_id: args.ownerId,
      letter_id: args.letterId,
      sentence_hash: args.sentenceHash,
      flag_kind: args.flagKind,
    })
    .onConflict((oc) => oc.constraint("letter_confirmations_unique").doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}
