import { CompiledQuery, type Transaction } from "kysely";
import type { Database } from "~/models/schema";
import type PgBoss from "pg-boss";

// The queue handle of this process (none in a web-only instance or a test), and the wake-up of a job whose row is
// the truth (transcription and letter jobs): pg-boss only delivers it, so its
// own retries are off. Sent inside the transaction that creates the job row (pg-boss's `db` option on top of a
// kysely transaction), so the wake-up goes with the job, or not at all.

function queueIn(trx: Transaction<Database>) {
  return {
    async executeSql(text: string, values: unknown[] = []) {
      const result = await trx.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows };
    },
  };
}

export async function sendWakeUp(
  queue: string,
  jobId: string,
  options: { trx?: Transaction<Database>; startAfterSeconds?: number; expireInSeconds: number },
) {
  const jobs = peekJobs();
  // Without a queue in this process (tests, a web-only instance) the job stays queued for the sweep.
  if (!jobs) return;
  await jobs.boss.send(
    queue,
    { jobId },
    {
      ...(options.trx ? { db: queueIn(options.trx) } : {}),
      startAfter: options.startAfterSeconds,
      retryLimit: 0,
      expireInSeconds: options.expireInSeconds,
    },
  );
}

export type JobsHandle = { boss: PgBoss; stop(): Promise<void> };

let current: JobsHandle | undefined;
export function setJobs(handle: JobsHandle | undefined) {
  current = handle;
}
/** The queue when this process started one; the job rows stay the truth either way. */
export function peekJobs(): JobsHandle | undefined {
  return current;
}
export function getJobs() {
  if (!current) throw new Error("Job queue not started");
  return current;
}
