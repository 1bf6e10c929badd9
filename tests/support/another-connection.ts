import { randomUUID } from "node:crypto";
import pg from "pg";
import { getDatabase } from "~/models/db.server";
import { CHANGE_CHANNEL } from "~/models/db-notices.server";

/**
 * Runs `statement` on a connection of its own, not the app's — as an operator's psql, a second instance or the worker
 * would — and waits until this process has heard the database's notices of it (migration 0025): on PGlite they come
 * with the statement's answer, on PostgreSQL over the listening connection. A marker notice sent after the statement
 * arrives after them (one sender's notices arrive in order). Fails if it does not come within a second (the promise of
 * issue 26). Resolves with how long it took, in ms.
 */
export async function fromAnotherConnection(statement: string, params: unknown[] = []) {
  const database = getDatabase();
  const marker = `marker:${randomUUID()}`;
  const heard = new Promise<number>((resolve, reject) => {
    const started = performance.now();
    const timeout = setTimeout(() => reject(new Error("no notice within a second")), 1_000);
    const stop = database.notices.subscribe({
      notice(payload) {
        if (payload !== marker) return;
        clearTimeout(timeout);
        stop();
        resolve(performance.now() - started);
      },
      reset() {},
    });
  });
  const client = new pg.Client({ connectionString: database.connectionString });
  await client.connect();
  try {
    await client.query(statement, params);
    await client.query("select pg_notify($1, $2)", [CHANGE_CHANNEL, marker]);
  } finally {
    await client.end();
  }
  return heard;
}
