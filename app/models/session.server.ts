import { getDb } from "~/models/db.server";

export async function insertSession(args: {
  idHash: string;
  userId: string;
  expiresAt: Date;
  idToken: string | null;
  deviceLabel: string | null;
}) {
  await getDb()
    .insertInto("sessions")
    .values({
      id_hash: args.idHash,
      user_id: args.userId,
      expires_at: args.expiresAt,
      id_token: args.idToken,
      device_label: args.deviceLabel,
    })
    .execute();
}

export async function findSession({ idHash }: { idHash: string }) {
  return getDb()
    .selectFrom("sessions")
    .innerJoin("users", "users.id", "sessions.user_id")
    .where("sessions.id_hash", "=", idHash)
    .select([
      "sessions.id_hash",
      "sessions.user_id",
      "sessions.last_seen_at",
      "sessions.expires_at",
      "users.email",
      "users.email_verified",
      "users.name",
    ])
    .executeTakeFirst();
}

export async function touchSession({ idHash, at }: { idHash: string; at: Date }) {
  await getDb().updateTable("sessions").set({ last_seen_at: at }).where("id_hash", "=", idHash).execute();
}

export async function deleteSession({ idHash }: { idHash: string }) {
  return getDb()
    .deleteFrom("sessions")
    .where("id_hash", "=", idHash)
    .returning(["user_id", "id_token"])
    .executeTakeFirst();
}

/** Sessions past their absolute end or idle for longer than `idleMs`. */
export async function deleteExpiredSessions({ now, idleMs }: { now: Date; idleMs: number }) {
  const idleBefore = new Date(now.getTime() - idleMs);
  const result = await getDb()
    .deleteFrom("sessions")
    .where((eb) => eb.or([eb("expires_at", "<=", now), eb("last_seen_at", "<=", idleBefore)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

type Liveness = { userId: string; now: Date; idleMs: number };

/** The user's sessions that are still alive (the same limits readSession applies), most recently used first. */
function activeSessionsOf({ userId, now, idleMs }: Liveness) {
  return getDb()
    .selectFrom("sessions")
    .where("user_id", "=", userId)
    .where("expires_at", ">", now)
    .where("last_seen_at", ">", new Date(now.getTime() - idleMs))
    .orderBy("last_seen_at", "desc")
    .orderBy("created_at", "desc");
}

/**
 * Settings › "Aktive Sitzungen": only what the list shows; the current session is told apart here, by its hash,
 * and comes first.
 */
export async function listActiveSessions(args: Liveness & { currentIdHash: string }) {
  return getDb()
    .selectFrom(
      activeSessionsOf(args)
        .clearOrderBy()
        .select(["public_id", "device_label", "created_at", "last_seen_at"])
        .select((eb) => eb("id_hash", "=", args.currentIdHash).as("is_current"))
        .as("s"),
    )
    .selectAll()
    .orderBy("is_current", "desc")
    .orderBy("last_seen_at", "desc")
    .orderBy("created_at", "desc")
    .execute();
}

/** Ends the user's sessions other than the current one — one by its public id, or all. Returns the ended ids. */
export async function deleteOtherSessions(args: { userId: string; currentIdHash: string; publicId?: string }) {
  let query = getDb()
    .deleteFrom("sessions")
    .where("user_id", "=", args.userId)
    .where("id_hash", "<>", args.currentIdHash);
  if (args.publicId !== undefined) query = query.where("public_id", "=", args.publicId);
  const rows = await query.returning("public_id").execute();
  return rows.map((row) => row.public_id);
}

/** Ends the user's live sessions beyond the `keep` most recently used, never `newIdHash`; returns their ids. */
export async function deleteSessionsBeyond(args: Liveness & { keep: number; newIdHash: string }) {
  const rows = await getDb()
    .deleteFrom("sessions")
    .where(
      "id_hash",
      "in",
      activeSessionsOf(args)
        .where("id_hash", "<>", args.newIdHash)
        .select("id_hash")
        .offset(Math.max(0, args.keep - 1)),
    )
    .returning("public_id")
    .execute();
  return rows.map((row) => row.public_id);
}

/**
 * An admin ends sessions (ASVS 5.0 7.4.5): every session of these users, or of everyone when `userIds` is omitted,
 * never `keepIdHash` (the admin's current one). Returns the ended rows' owners and public ids.
 */
export async function deleteSessionsExcept(args: { keepIdHash: string; userIds?: string[] }) {
  if (args.userIds?.length === 0) return [];
  let query = getDb().deleteFrom("sessions").where("id_hash", "<>", args.keepIdHash);
  if (args.userIds) query = query.where("user_id", "in", args.userIds);
  return query.returning(["user_id", "public_id"]).execute();
}
