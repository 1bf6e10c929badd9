import { keptStore } from "~/models/kept.server";
import type { findSession } from "~/models/session.server";

// The sessions this instance has read, kept so that a request need not read its session row again (ADR 0038): every
// signed-in request read it — a query and a join, a fifth of the cheapest answer's work. A kept row is the
// database's row as long as the database has not said otherwise (models/kept.server.ts): the notices of migration 0025
// (any update or delete of the row, or of the user's name or e-mail address, from any instance or an operator's
// statement) drop it here at once. So a session ended anywhere is refused here as soon as the notice arrives —
// milliseconds on one PostgreSQL — and the idle and absolute ends, worked out from the row's times, stay the
// database's. A row is kept at most a minute, touch or no touch.

export type SessionRow = NonNullable<Awaited<ReturnType<typeof findSession>>>;

const sessions = keptStore<SessionRow>({ groupPrefix: "user:", maxAgeMs: 60_000, maxEntries: 10_000 });

/** The kept row of a session, if it may be used. */
export function keptSession(idHash: string, now: number): SessionRow | undefined {
  return sessions.get(idHash, now);
}

/** To be taken before the row is read: keepSession keeps it only if no notice came in between. */
export function sessionReadTicket() {
  return sessions.ticket();
}

export function keepSession(idHash: string, row: SessionRow, ticket: number, now: number) {
  sessions.keep(idHash, row.user_id, row, ticket, { now });
}
