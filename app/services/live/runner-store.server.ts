import { sql } from "kysely";
import { getDb } from "~/models/db.server";

// The runner's queries (ADR 0013): the lease on a session's run, where a new run resumes, publishing while the
// lease is held, and how far recognition and metering reached (migration 0012). The session's other queries
// are in app/models/live-session.server.ts. Sessions are named by id: the service checked the owner first.

/**
 * Takes the session's run for `instance`: only when nobody holds it or the holder's lease lapsed. A start
 * (StartRecognition) opens a new stretch of the session: status running, no end yet. A takeover continues the
 * run of an instance that stopped renewing its lease: only a running or ending session, whose end it keeps.
 */
export async function claimLiveRunner(
  id: string,
  instance: string,
  leaseMs: number,
  mode: "start" | "takeover" = "start",
  now = new Date(),
) {
  const opened = { status: "running" as const, end_seq: null, error_type: null, error_reason: null };
  return getDb()
    .updateTable("live_sessions")
    .set({
      runner_instance: instance,
      runner_lease_until: new Date(now.getTime() + leaseMs),
      ...(mode === "start" ? opened : {}),
      updated_at: now,
    })
    .where("id", "=", id)
    .where("status", "in", mode === "start" ? ["idle", "paused", "running", "ending"] : ["running", "ending"])
    .where((eb) =>
      eb.or([
        eb("runner_instance", "is", null),
        eb("runner_lease_until", "is", null),
        eb("runner_lease_until", "<", now),
      ]),
    )
    .returning(["buffers", "samples", "end_seq", "recognised_seq", "recognised_samples"])
    .executeTakeFirst();
}

export type RunnerClaim = NonNullable<Awaited<ReturnType<typeof claimLiveRunner>>>;

/**
 * Where a run that just claimed the session starts feeding, and where its time line begins: the buffer that
 * holds the point `leadSamples` before the end of what is final (the engine hears some context again), but
 * never before the end of the buffers a run saw through to EndOfTranscript; after everything held when all of
 * it is recognised. Recorded as the run's start (run_started_samples).
 */
export async function resumeLiveRun(id: string, instance: string, claim: RunnerClaim, leadSamples: number) {
  const db = getDb();
  let from = { seq: claim.buffers + 1, start: Number(claim.samples) };
  if (claim.recognised_seq < claim.buffers) {
    const target = Number(claim.recognised_samples) - leadSamples;
    const { rows } = await sql<{ seq: number; start: string }>`
      select seq, start from (
        select seq, sum(samples) over (order by seq) - samples as start
        from live_audio where session_id = ${id} and seq <= ${claim.buffers}
      ) held
      where start <= ${target} or seq <= ${claim.recognised_seq + 1}
      order by seq desc limit 1`.execute(db);
    from = rows[0] ? { seq: rows[0].seq, start: Number(rows[0].start) } : { seq: 1, start: 0 };
  }
  await db
    .updateTable("live_sessions")
    .set({ run_started_samples: from.start })
    .where("id", "=", id)
    .where("runner_instance", "=", instance)
    .execute();
  return from;
}

export async function renewLiveRunner(id: string, instance: string, leaseMs: number, now = new Date()) {
  const result = await getDb()
    .updateTable("live_sessions")
    .set({ runner_lease_until: new Date(now.getTime() + leaseMs) })
    .where("id", "=", id)
    .where("runner_instance", "=", instance)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Publishes a message of a run: numbers it within the session and stores it, only while `instance` holds the
 * run (undefined otherwise: another instance took over). A final moves the recognised point to its end.
 */
export async function insertRunMessage(
  id: string,
  instance: string,
  kind: string,
  message: object,
  recognisedSamples?: number,
): Promise<number | undefined> {
  return getDb()
    .transaction()
    .execute(async (trx) => {
      const row = await trx
        .updateTable("live_sessions")
        .set({
          last_message_n: sql`last_message_n + 1`,
          ...(recognisedSamples === undefined
            ? {}
            : { recognised_samples: sql`greatest(recognised_samples, ${recognisedSamples})` }),
          updated_at: new Date(),
        })
        .where("id", "=", id)
        .where("runner_instance", "=", instance)
        .returning("last_message_n")
        .executeTakeFirst();
      if (!row) return undefined;
      await trx
        .insertInto("live_messages")
        .values({ session_id: id, n: row.last_message_n, kind, message: JSON.stringify(message) })
        .execute();
      return row.last_message_n;
    });
}

/** A run saw buffers up to `seq` (ending at `samples` on the time line) through to EndOfTranscript. */
export async function markRecognisedThrough(id: string, instance: string, seq: number, samples: number) {
  await getDb()
    .updateTable("live_sessions")
    .set({
      recognised_seq: sql`greatest(recognised_seq, ${seq})`,
      recognised_samples: sql`greatest(recognised_samples, ${samples})`,
    })
    .where("id", "=", id)
    .where("runner_instance", "=", instance)
    .execute();
}

/** Moves the metered point to `upTo` samples; answers how many samples that adds (none when already past). */
export async function advanceMetered(id: string, upTo: number): Promise<number> {
  const { rows } = await sql<{ before: string }>`
    with old as (select metered_samples from live_sessions where id = ${id} for update)
    update live_sessions set metered_samples = greatest(old.metered_samples, ${upTo})
    from old where live_sessions.id = ${id}
    returning old.metered_samples as before`.execute(getDb());
  return rows[0] ? Math.max(0, upTo - Number(rows[0].before)) : 0;
}

/** The run ended: the runner lets go and the session settles (paused when it holds audio). False if not held. */
export async function releaseLiveRunner(
  id: string,
  instance: string,
  outcome: { errorType?: string; errorReason?: string } = {},
) {
  const result = await getDb()
    .updateTable("live_sessions")
    .set({
      runner_instance: null,
      runner_lease_until: null,
      status: sql`case when status in ('saved', 'discarded') then status when buffers > 0 then 'paused' else 'idle' end`,
      error_type: outcome.errorType ?? null,
      error_reason: outcome.errorReason ?? null,
      updated_at: new Date(),
    })
    .where("id", "=", id)
    .where("runner_instance", "=", instance)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
