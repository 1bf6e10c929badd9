import { consentColumns, type ConsentRecord } from "./consent-rules";
import { sql } from "kysely";
import { getDb } from "~/models/db.server";
import type { LiveSessionStatus } from "./schema";

// Live sessions (migration 0007, ADR 0013). Every query a user triggers is scoped by owner; the runner names a
// session by id only after the service has checked its owner. Audio buffers are numbered from 1 without gaps:
// a buffer is stored only when it is the next one, so what the server holds is always contiguous.

const sessionColumns = [
  "id",
  "owner_id",
  "kind",
  "language",
  "engine",
  "status",
  "consent_kind",
  "consent_given_by",
  "consent_confirmed_at",
  "transport",
  "buffers",
  "samples",
  "end_seq",
  "run_started_samples",
  "runner_instance",
  "runner_lease_until",
  "last_message_n",
  "error_type",
  "error_reason",
  "created_at",
  "updated_at",
] as const;

export type LiveSessionRow = Awaited<ReturnType<typeof findLiveSession>> & object;

export async function insertLiveSession(args: {
  ownerId: string;
  kind: "recording" | "dictation";
  language: "de" | "en";
  engine: string;
  consent: ConsentRecord | null;
}) {
  const { consent_kind, consent_given_by, consent_confirmed_at } = consentColumns(args.consent);
  return getDb()
    .insertInto("live_sessions")
    .values({
      owner_id: args.ownerId,
      kind: args.kind,
      language: args.language,
      engine: args.engine,
      consent_kind,
      consent_given_by,
      consent_confirmed_at,
    })
    .returning(sessionColumns)
    .executeTakeFirstOrThrow();
}

export async function findLiveSession({ ownerId, id }: { ownerId: string; id: string }) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  return getDb()
    .selectFrom("live_sessions")
    .select(sessionColumns)
    .where("id", "=", id)
    .where("owner_id", "=", ownerId)
    .executeTakeFirst();
}

/** For the runner, after the service checked the owner. */
export async function findLiveSessionById(id: string) {
  return getDb().selectFrom("live_sessions").select(sessionColumns).where("id", "=", id).executeTakeFirst();
}

/** The newest recording session this user has not saved or discarded and that holds audio. */
export async function findUnfinishedRecording(ownerId: string) {
  return getDb()
    .selectFrom("live_sessions")
    .select(sessionColumns)
    .where("owner_id", "=", ownerId)
    .where("kind", "=", "recording")
    .where("status", "in", ["idle", "running", "ending", "paused"])
    .where("buffers", ">", 0)
    .orderBy("created_at", "desc")
    .executeTakeFirst();
}

export async function updateLiveSession(
  id: string,
  set: Partial<{
    status: LiveSessionStatus;
    transport: string | null;
    end_seq: number | null;
    error_type: string | null;
    error_reason: string | null;
  }>,
) {
  return getDb()
    .updateTable("live_sessions")
    .set({ ...set, updated_at: new Date() })
    .where("id", "=", id)
    .returning(sessionColumns)
    .executeTakeFirst();
}

/**
 * Stores buffers `firstSeq…` of a session. Buffers the server already holds are skipped (a re-send after a
 * transport switch); a buffer past the next expected one is refused, so nothing is stored out of order.
 * Returns the number of buffers held afterwards and the buffers that were new.
 */
export async function appendLiveAudio(
  id: string,
  firstSeq: number,
  buffers: Buffer[],
): Promise<{ held: number; stored: Array<{ seq: number; pcm: Buffer }> } | { gapAfter: number }> {
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const session = await trx
        .selectFrom("live_sessions")
        .select(["buffers", "samples"])
        .where("id", "=", id)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const held = session.buffers;
      if (firstSeq > held + 1) return { gapAfter: held };
      const fresh = buffers.slice(held + 1 - firstSeq).map((pcm, i) => ({ seq: held + 1 + i, pcm }));
      if (fresh.length === 0) return { held, stored: [] };
      await trx
        .insertInto("live_audio")
        .values(fresh.map((b) => ({ session_id: id, seq: b.seq, samples: b.pcm.length / 2, pcm: b.pcm })))
        .execute();
      const samples = fresh.reduce((sum, b) => sum + b.pcm.length / 2, 0);
      await trx
        .updateTable("live_sessions")
        .set({
          buffers: held + fresh.length,
          samples: sql`samples + ${samples}`,
          updated_at: new Date(),
        })
        .where("id", "=", id)
        .execute();
      return { held: held + fresh.length, stored: fresh };
    });
}

/** Buffers from `fromSeq` on, in order, a page at a time (the runner catching up, saving, a bench). */
export async function readLiveAudio(id: string, fromSeq: number, limit = 64) {
  return getDb()
    .selectFrom("live_audio")
    .select(["seq", "pcm"])
    .where("session_id", "=", id)
    .where("seq", ">=", fromSeq)
    .orderBy("seq")
    .limit(limit)
    .execute();
}

/** Publishes a message: numbers it within the session (rising from 1) and stores it. */
export async function insertLiveMessage(id: string, kind: string, message: object): Promise<number> {
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const { last_message_n: n } = await trx
        .updateTable("live_sessions")
        .set({ last_message_n: sql`last_message_n + 1`, updated_at: new Date() })
        .where("id", "=", id)
        .returning("last_message_n")
        .executeTakeFirstOrThrow();
      await trx
        .insertInto("live_messages")
        .values({ session_id: id, n, kind, message: JSON.stringify(message) })
        .execute();
      return n;
    });
}

export async function liveMessagesAfter(id: string, after: number, kinds?: string[]) {
  let query = getDb()
    .selectFrom("live_messages")
    .select(["n", "kind", "message"])
    .where("session_id", "=", id)
    .where("n", ">", after);
  if (kinds) query = query.where("kind", "in", kinds);
  return query.orderBy("n").execute();
}

/** Drops what a session published in passing (partials), keeping finals and notices. */
export async function deleteLivePartials(id: string) {
  await getDb().deleteFrom("live_messages").where("session_id", "=", id).where("kind", "=", "partial").execute();
}

/** Removes a session's audio and messages (discard; after saving, the recording holds what matters). */
export async function deleteLiveContent(id: string) {
  const db = getDb();
  await db.deleteFrom("live_audio").where("session_id", "=", id).execute();
  await db.deleteFrom("live_messages").where("session_id", "=", id).execute();
}

/** Sessions nobody finished, older than `before`: their audio is patient data and must not linger. */
export async function deleteAbandonedLiveSessions(before: Date) {
  const rows = await getDb()
    .deleteFrom("live_sessions")
    .where("updated_at", "<", before)
    .where((eb) => eb.or([eb("runner_lease_until", "is", null), eb("runner_lease_until", "<", before)]))
    .returning("id")
    .execute();
  return rows.length;
}

/**
 * Runs whose instance died and whose client went quiet: the lease lapsed and nothing changed since `quietSince`,
 * so the session is paused (it holds audio) or idle again. A session still receiving audio is left to a
 * takeover (runner-takeover.server.ts). The runner's own queries are in services/live/runner-store.server.ts.
 */
export async function releaseLapsedRunners(now = new Date(), quietSince = now) {
  const result = await getDb()
    .updateTable("live_sessions")
    .set({
      runner_instance: null,
      runner_lease_until: null,
      status: sql`case when buffers > 0 then 'paused' else 'idle' end`,
      updated_at: now,
    })
    .where("status", "in", ["running", "ending"])
    .where("runner_lease_until", "<", now)
    .where("updated_at", "<", quietSince)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
