import type { Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database } from "./schema";

// The doctor's own vocabulary (migration 0018), scoped by owner (STYLE.md §2). The limits are the service's
// (app/services/transcription/user-vocabulary.server.ts), which writes under a lock on the user's row.

export type VocabularyLanguage = "de" | "en";

export async function listUserVocabulary({ ownerId, language }: { ownerId: string; language?: VocabularyLanguage }) {
  let query = getDb()
    .selectFrom("user_vocabulary")
    .where("owner_id", "=", ownerId)
    .select(["id", "language", "content", "sounds_like", "updated_at"])
    .orderBy("updated_at", "desc")
    .orderBy("content", "asc");
  if (language) query = query.where("language", "=", language);
  return query.execute();
}

/** The user's terms as the settings list shows them (ADR 0031), with when each was added; sorted by the service. */
export async function listUserVocabularyTerms({ ownerId }: { ownerId: string }) {
  return getDb()
    .selectFrom("user_vocabulary")
    .where("owner_id", "=", ownerId)
    .select(["id", "language", "content", "sounds_like", "created_at"])
    .execute();
}

/** The user's row, locked: two corrections cannot both take the last free place. */
export async function lockVocabularyOwner(trx: Transaction<Database>, ownerId: string) {
  return trx.selectFrom("users").where("id", "=", ownerId).select("id").forUpdate().executeTakeFirst();
}

export async function countUserVocabulary(trx: Transaction<Database>, ownerId: string) {
  const row = await trx
    .selectFrom("user_vocabulary")
    .where("owner_id", "=", ownerId)
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findUserVocabularyTerm(
  trx: Transaction<Database>,
  { ownerId, language, contentKey }: { ownerId: string; language: VocabularyLanguage; contentKey: string },
) {
  return trx
    .selectFrom("user_vocabulary")
    .where("owner_id", "=", ownerId)
    .where("language", "=", language)
    .where("content_key", "=", contentKey)
    .select(["id", "sounds_like"])
    .executeTakeFirst();
}

export async function insertUserVocabularyTerm(
  trx: Transaction<Database>,
  values: { ownerId: string; language: VocabularyLanguage; content: string; contentKey: string; soundsLike: string[] },
) {
  const row = await trx
    .insertInto("user_vocabulary")
    .values({
      owner_id: values.ownerId,
      language: values.language,
      content: values.content,
      content_key: values.contentKey,
      sounds_like: JSON.stringify(values.soundsLike),
      updated_at: new Date(),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateUserVocabularySoundsLike(
  trx: Transaction<Database>,
  { ownerId, id, soundsLike }: { ownerId: string; id: string; soundsLike: string[] },
) {
  await trx
    .updateTable("user_vocabulary")
    .set({ sounds_like: JSON.stringify(soundsLike), updated_at: new Date() })
    .where("owner_id", "=", ownerId)
    .where("id", "=", id)
    .execute();
}

/** Removes one of the user's terms; its text when it was theirs, undefined otherwise (another user's, made up). */
export async function deleteUserVocabularyTerm({ ownerId, id }: { ownerId: string; id: string }) {
  const row = await getDb()
    .deleteFrom("user_vocabulary")
    .where("owner_id", "=", ownerId)
    .where("id", "=", id)
    .returning(["content"])
    .executeTakeFirst();
  return row?.content;
}
