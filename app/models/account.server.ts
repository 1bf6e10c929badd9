import { sql, type Kysely, type Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database } from "./schema";

// Account deletion's queries (migration 0010). Everything a user owns cascades from their users row; what needs
// doing before the row goes (work in flight, unfinished multipart uploads) is read here, scoped by owner.

type Db = Kysely<Database> | Transaction<Database>;

/** What must be stopped before an account's rows go: its recordings and live sessions. */
export async function listWorkOf(ownerId: string) {
  const db = getDb();
  const [recordings, liveSessions] = await Promise.all([
    db
      .selectFrom("recordings")
      .select(["id", "storage_key", "multipart_upload_id"])
      .where("owner_id", "=", ownerId)
      .execute(),
    db.selectFrom("live_sessions").select("id").where("owner_id", "=", ownerId).execute(),
  ]);
  return { recordings, liveSessions: liveSessions.map((row) => row.id) };
}

/** What the confirmation says will be lost. */
export async function countOwned(ownerId: string) {
  const db = getDb();
  const count = (table: "recordings" | "letters" | "custom_templates" | "saved_prompts" | "chat_messages") =>
    db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("owner_id", "=", ownerId)
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n));
  const [recordings, letters, templates, prompts, chatMessages] = await Promise.all([
    count("recordings"),
    count("letters"),
    count("custom_templates"),
    count("saved_prompts"),
    count("chat_messages"),
  ]);
  return { recordings, letters, templates, prompts, chatMessages };
}

/** The user row goes (every owned row with it); its id stays in account_purges for the storage sweep. */
export async function deleteUserRow(trx: Db, userId: string) {
  await trx
    .insertInto("account_purges")
    .values({ owner_id: userId })
    .onConflict((oc) => oc.column("owner_id").doNothing())
    .execute();
  const deleted = await trx.deleteFrom("users").where("id", "=", userId).executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}

/** Accounts by exact e-mail address (domain and local part compared without case), for the admin's deletion. */
export async function findUsersByEmail(email: string) {
  return getDb()
    .selectFrom("users")
    .select(["id", "email", "name"])
    .where(sql<string>`lower(email)`, "=", email.trim().toLowerCase())
    .execute();
}

export async function listAccountPurges() {
  return getDb().selectFrom("account_purges").selectAll().orderBy("requested_at").execute();
}

export async function markPurgeChecked(ownerId: string, at: Date) {
  await getDb().updateTable("account_purges").set({ checked_at: at }).where("owner_id", "=", ownerId).execute();
}

export async function markPurgeFailed(ownerId: string) {
  await getDb()
    .updateTable("account_purges")
    .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
    .where("owner_id", "=", ownerId)
    .execute();
}

export async function deleteAccountPurge(ownerId: string) {
  await getDb().deleteFrom("account_purges").where("owner_id", "=", ownerId).execute();
}
