import { keptStore } from "./kept.server";

// Each clinician's lists as the database last gave them (ADR 0038): the workspace, Transcriptions and Arztbriefe pages
// and the JSON lists read the same rows again on every view — for 1,000 recordings about half of each answer's work on
// the embedded database. A list is kept until a notice names its clinician: migration 0025's triggers send one for
// every insert, update or delete of a row of the tables the lists read (recordings, transcripts, letters, their jobs,
// the templates), from this instance, another one, the worker or an operator's statement. A kept list is shared by the
// requests that read it, so it is frozen: code that changed a row in place would throw, not change another answer.
// At most 10 minutes, 500 lists and 50,000 rows in all (a list of 1,000 recordings is some 1.5 MB).

const lists = keptStore<unknown>({ groupPrefix: "owner:", maxAgeMs: 10 * 60_000, maxEntries: 500, maxWeight: 50_000 });

/**
 * `read`'s answer for the clinician `ownerId`, kept under `name` and `params` (which must say everything else the
 * answer depends on). Only for reads of the tables migration 0025 watches, scoped to that clinician.
 */
export async function keptForOwner<T>(ownerId: string, name: string, params: unknown[], read: () => Promise<T>) {
  const key = `${ownerId}\u0000${name}\u0000${JSON.stringify(params)}`;
  const kept = lists.get(key);
  if (kept !== undefined) return kept as T;
  const ticket = lists.ticket();
  const value = frozen(await read());
  lists.keep(key, ownerId, value, ticket, { weight: rowsIn(value) });
  return value;
}

/** A list's weight: its rows, or the rows of the lists it holds ({ rows, total }). */
function rowsIn(value: unknown) {
  if (Array.isArray(value)) return Math.max(1, value.length);
  if (value === null || typeof value !== "object") return 1;
  return Math.max(1, ...Object.values(value).map((inner) => (Array.isArray(inner) ? inner.length : 0)));
}

function frozen<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value) || ArrayBuffer.isView(value)) return value;
  for (const inner of Object.values(value)) frozen(inner);
  return Object.freeze(value);
}
