import { getDatabase, type DatabaseHandle } from "~/models/db.server";
import type { findSession } from "~/models/session.server";

// The sessions this instance has read, kept so that a request need not read its session row again (ADR 0038): every
// signed-in request read it — a query and a join, the larger part of the cheapest answer's work. A kept row is the
// database's row as long as the database has not said otherwise: the notices of migration 0025 (any update or delete of
// the row, from any instance or an operator's statement) drop it here at once, and while they cannot be heard (the
// listening connection is reconnecting) nothing is kept or used. So a session ended anywhere is refused here as soon
// as the notice arrives — milliseconds on one PostgreSQL — and the idle and absolute ends, worked out from the row's
// times, stay the database's. A row is kept at most a minute, touch or no touch, and at most MAX_ENTRIES of them.

export type SessionRow = NonNullable<Awaited<ReturnType<typeof findSession>>>;

const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;

type Kept = { row: SessionRow; keptAt: number };

const kept = new Map<string, Kept>();
// Counts every notice and reset: a row read before one of them may be its old state, and is not kept (keepSession).
let generation = 0;
let attachedTo: DatabaseHandle | undefined;
let detach: (() => void) | undefined;

function forget(payload: string) {
  generation++;
  if (payload === "*") return kept.clear();
  if (!payload.startsWith("user:")) return void kept.delete(payload);
  const userId = payload.slice("user:".length);
  for (const [idHash, entry] of kept) if (entry.row.user_id === userId) kept.delete(idHash);
}

/** The current database's notices, heard from the first use on (a test installs a database per file). */
function notices() {
  const database = getDatabase();
  if (attachedTo !== database) {
    detach?.();
    kept.clear();
    generation++;
    attachedTo = database;
    detach = database.notices.subscribe({
      notice: forget,
      reset: () => {
        generation++;
        kept.clear();
      },
    });
  }
  return database.notices;
}

/** The kept row of a session, if it may be used: notices are heard and it is younger than a minute. */
export function keptSession(idHash: string, now: number): SessionRow | undefined {
  if (!notices().live) return undefined;
  const entry = kept.get(idHash);
  if (!entry) return undefined;
  if (now - entry.keptAt < MAX_AGE_MS) return entry.row;
  kept.delete(idHash);
  return undefined;
}

/** To be taken before the row is read: keepSession keeps it only if no notice came in between. */
export function sessionReadTicket() {
  notices();
  return generation;
}

export function keepSession(idHash: string, row: SessionRow, ticket: number, now: number) {
  if (ticket !== generation || !notices().live) return;
  if (kept.size >= MAX_ENTRIES) kept.delete(kept.keys().next().value as string);
  kept.set(idHash, { row, keptAt: now });
}
