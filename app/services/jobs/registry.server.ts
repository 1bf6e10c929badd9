import { createRequire } from "node:module";
import PgBoss from "pg-boss";
import type pg from "pg";
import { deleteExpiredSessions } from "~/models/session.server";
import { deleteAuditPastRetention } from "../audit/audit.server";
import { getConfig } from "../config/config.server";
import { getDatabase, upkeepEmbeddedDatabase } from "../../models/db.server";
import { deleteExpiredPendingPosts } from "../web/pending-post.server";
import { pruneRateLimits } from "../web/rate-limit.server";
import { deletePastRetention, deleteStaleUploads } from "../recordings/removal.server";
import { runLetterJob, sweepLetterJobs } from "../letters/job.server";
import { LETTER_QUEUE } from "../letters/letters.server";
import { sweepAccountPurges } from "../accounts/account-deletion.server";
import { sweepChats } from "../chat/chat.server";
import { sweepLiveSessions } from "../live/sessions.server";
import { runTranscriptionJob, sweepTranscriptionJobs } from "../transcription/job.server";
import { TRANSCRIPTION_QUEUE } from "../transcription/transcription.server";
import { onModelReady } from "../model-store/downloads.server";
import type { JobsHandle } from "./queue.server";

// The durable queue lives in the database (pg-boss, ADR 0005). It talks through
// the app's own pool, so on the embedded PGlite it shares the single connection
// and never interleaves with a transaction.

export const queues = {
  expireSessions: "maintenance-expire-sessions",
  transcription: TRANSCRIPTION_QUEUE,
  transcriptionSweep: "maintenance-transcription-sweep",
  databaseUpkeep: "maintenance-database-upkeep",
  letter: LETTER_QUEUE,
} as const;

const SCHEMA = "pgboss";

/**
 * pg-boss 10 marks a delivery completed or failed without awaiting it (timgit/pg-boss#577): with the database
 * gone at that moment the rejection would be unhandled and end the process — the web process too, where the
 * worker runs in-process. A lost settlement is harmless here: the job rows are the truth (the sweep re-sends a
 * lost wake-up), and pg-boss expires the delivery later. So those two statements report their failure instead.
 */
function settlementStatements() {
  const plans = createRequire(import.meta.url)("pg-boss/src/plans.js") as Record<string, (schema: string) => string>;
  return new Set([plans.completeJobs(SCHEMA), plans.failJobsById(SCHEMA)]);
}

function queueDatabase(pool: pg.Pool) {
  const settlements = settlementStatements();
  return {
    async executeSql(text: string, values?: unknown[]) {
      if (!settlements.has(text)) return pool.query(text, values);
      return pool.query(text, values).catch((error: Error) => {
        console.warn("[jobs] a delivery could not be settled:", error.message);
        return { rows: [{ count: "0" }] };
      });
    },
  };
}

export async function startJobs(options: { pool: pg.Pool; work: boolean; schedule?: boolean }) {
  let unsubscribe: (() => void) | undefined;
  const boss = new PgBoss({
    db: queueDatabase(options.pool),
    schema: SCHEMA,
    // Maintenance and cron only where the worker runs; a pure web instance just sends.
    supervise: options.work,
    schedule: options.work && options.schedule !== false,
  });
  boss.on("error", (error) => console.warn("[jobs]", error.message));
  await boss.start();
  await boss.createQueue(queues.expireSessions, {
    name: queues.expireSessions,
    policy: "singleton",
    retryLimit: 3,
    retryDelay: 30,
    retryBackoff: true,
    expireInSeconds: 120,
  });
  // The job rows hold status, attempts and leases (transcription.server.ts); pg-boss only delivers the
  // wake-up, so its own retries are off.
  await boss.createQueue(queues.transcription, {
    name: queues.transcription,
    policy: "standard",
    retryLimit: 0,
    expireInSeconds: 4 * 60 * 60,
  });
  await boss.createQueue(queues.letter, {
    name: queues.letter,
    policy: "standard",
    retryLimit: 0,
    expireInSeconds: 60 * 60,
  });
  await boss.createQueue(queues.transcriptionSweep, {
    name: queues.transcriptionSweep,
    policy: "singleton",
    retryLimit: 0,
    expireInSeconds: 60,
  });
  await boss.createQueue(queues.databaseUpkeep, {
    name: queues.databaseUpkeep,
    policy: "singleton",
    retryLimit: 0,
    expireInSeconds: 15 * 60,
  });
  if (options.work) {
    await boss.work(queues.expireSessions, async () => {
      await runExpireSessions();
    });
    await boss.work<{ jobId: string }>(
      queues.transcription,
      { batchSize: 1, pollingIntervalSeconds: 1 },
      async ([job]) => {
        if (job?.data?.jobId) await runTranscriptionJob(job.data.jobId);
      },
    );
    await boss.work<{ jobId: string }>(queues.letter, { batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
      if (job?.data?.jobId) await runLetterJob(job.data.jobId);
    });
    // One sweep for every kind of job: lapsed leases back to the queue, lost wake-ups re-sent, live sessions of
    // dead runners paused and abandoned ones deleted, chat answers of dead writers failed, expired chats deleted,
    // deleted accounts' storage prefixes emptied of late writes.
    await boss.work(queues.transcriptionSweep, async () => {
      await sweepTranscriptionJobs();
      await sweepLetterJobs();
      await sweepLiveSessions();
      await sweepChats();
      await sweepAccountPurges();
    });
    // A model that finished downloading wakes the jobs that waited for it (issue 21), not the next sweep.
    unsubscribe = onModelReady(() => {
      void Promise.all([sweepTranscriptionJobs(), sweepLetterJobs()]).catch((error) =>
        console.warn("[jobs] waking jobs after a model arrived failed:", (error as Error).message),
      );
    });
    await boss.work(queues.databaseUpkeep, async () => {
      await runDatabaseUpkeep();
    });
    if (options.schedule !== false) {
      await boss.schedule(queues.expireSessions, "*/5 * * * *");
      await boss.schedule(queues.transcriptionSweep, "* * * * *");
      // The embedded database's autovacuum (app/models/db.server.ts); PostgreSQL does its own, so nothing is scheduled there.
      if (getDatabase().kind === "pglite") await boss.schedule(queues.databaseUpkeep, "23 * * * *");
    }
  }
  return {
    boss,
    async stop() {
      unsubscribe?.();
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    },
  } satisfies JobsHandle;
}

/** Statistics and dead rows of the embedded database, hourly (app/models/db.server.ts); null on PostgreSQL. */
export async function runDatabaseUpkeep() {
  const ms = await upkeepEmbeddedDatabase(getDatabase(), { vacuum: true });
  if (ms !== null) console.log(`[db] upkeep: vacuum and analyze in ${ms} ms`);
  return ms;
}

/**
 * Removes expired sessions, stale kept forms, old rate-limit windows, abandoned uploads, and audio and audit rows past
 * their retention.
 */
export async function runExpireSessions(now = new Date()) {
  const sessions = await deleteExpiredSessions({ now, idleMs: getConfig().session.idleMs });
  const pendingPosts = await deleteExpiredPendingPosts(now);
  const rateLimitWindows = await pruneRateLimits({ before: new Date(now.getTime() - 24 * 3_600_000) });
  const uploads = await deleteStaleUploads(now);
  const retention = await deletePastRetention(now);
  const auditTrail = await deleteAuditPastRetention(now);
  return { sessions, pendingPosts, rateLimitWindows, uploads, retention, auditTrail };
}
