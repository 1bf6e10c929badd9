import { sql, type Kysely, type Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database } from "./schema";

// Saved refinement prompts (SPEC §3), always scoped by owner.

type Db = Kysely<Database> | Transaction<Database>;

export async function listSavedPrompts({ ownerId }: { ownerId: string }) {
  return getDb()
    .selectFrom("saved_prompts")
    .where("owner_id", "=", ownerId)
    .select(["id", "title", "prompt_text", "created_at"])
    .orderBy("created_at", "asc")
    .execute();
}

/** Serialises prompt saves of one user, so two tabs cannot both add the third prompt. */
export async function lockUser(trx: Transaction<Database>, userId: string) {
  return trx.selectFrom("users").where("id", "=", userId).select("id").forUpdate().executeTakeFirst();
}

export async function countSavedPrompts(db: Db, ownerId: string) {
  const row = await db
    .selectFrom("saved_prompts")
    .where("owner_id", "=", ownerId)
    .select(sql<number>`count(*)::int`.as("count"))
    .executeTakeFirstOrThrow();
  return row.count;
}

export async function insertSavedPrompt(db: Db, args: { ownerId: string; title: string; promptText: string }) {
  return db
    .insertInto("saved_prompts")
    .values({ owner_id: args.ownerId, title: args.title, prompt_text: args.promptText })
    .returning(["id", "title", "prompt_text", "created_at"])
    .executeTakeFirstOrThrow();
}

export async function deleteSavedPrompt(args: { ownerId: string; id: string }) {
  const result = await getDb()
    .deleteFrom("saved_prompts")
    .where("owner_id", "=", args.ownerId)
    .where("id", "=", args.id)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
