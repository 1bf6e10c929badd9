import { getDb } from "~/services/db.server";

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
