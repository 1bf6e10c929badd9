import { getDatabase, type DatabaseHandle } from "./db.server";

// What an instance keeps in memory of rows it has read, trusted only as long as the database has not said they changed
// (ADR 0038). The notices of migration 0025 name a row's key, a group of keys (`user:<id>`, `owner:<id>`) or all (`*`);
// while they cannot be heard (the listening connection is reconnecting) nothing is kept or used, and what was kept is
// dropped when they are heard again. A value read before a notice arrived is never kept: the read takes a ticket first
// (the count of notices), and keep() refuses a ticket that is out of date. Each entry is kept at most `maxAgeMs`, and
// at most `maxEntries` of them weighing at most `maxWeight` together (the oldest go first; a list weighs its rows).

type Entry<T> = { value: T; group: string; keptAt: number; weight: number };

export type KeptStore<T> = {
  /** The kept value, if it may be used. */
  get(key: string, now?: number): T | undefined;
  /** Taken before the value is read from the database. */
  ticket(): number;
  keep(key: string, group: string, value: T, ticket: number, options?: { now?: number; weight?: number }): void;
};

/** `groupPrefix`: the notices that name a group of this store's keys ("user:" names the sessions of a user). */
export function keptStore<T>({
  groupPrefix,
  maxAgeMs,
  maxEntries,
  maxWeight = Infinity,
}: {
  groupPrefix: string;
  maxAgeMs: number;
  maxEntries: number;
  maxWeight?: number;
}): KeptStore<T> {
  const entries = new Map<string, Entry<T>>();
  const groups = new Map<string, Set<string>>();
  let generation = 0;
  let weight = 0;
  let attachedTo: DatabaseHandle | undefined;
  let detach: (() => void) | undefined;

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    weight -= entry.weight;
    const keys = groups.get(entry.group);
    keys?.delete(key);
    if (keys?.size === 0) groups.delete(entry.group);
  };
  const clear = () => {
    generation++;
    entries.clear();
    groups.clear();
    weight = 0;
  };
  const forget = (payload: string) => {
    generation++;
    if (payload === "*") return clear();
    if (payload.startsWith(groupPrefix)) {
      for (const key of groups.get(payload.slice(groupPrefix.length)) ?? []) remove(key);
    } else remove(payload);
  };

  /** The current database's notices, heard from the first use on (a test installs a database per file). */
  function notices() {
    const database = getDatabase();
    if (attachedTo !== database) {
      detach?.();
      clear();
      attachedTo = database;
      detach = database.notices.subscribe({ notice: forget, reset: clear });
    }
    return database.notices;
  }

  return {
    get(key, now = Date.now()) {
      if (!notices().live) return undefined;
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (now - entry.keptAt < maxAgeMs) return entry.value;
      remove(key);
      return undefined;
    },
    ticket() {
      notices();
      return generation;
    },
    keep(key, group, value, ticket, { now = Date.now(), weight: heavy = 1 } = {}) {
      if (ticket !== generation || !notices().live || heavy > maxWeight) return;
      remove(key);
      while (entries.size > 0 && (entries.size >= maxEntries || weight + heavy > maxWeight))
        remove(entries.keys().next().value as string);
      entries.set(key, { value, group, keptAt: now, weight: heavy });
      weight += heavy;
      let keys = groups.get(group);
      if (!keys) groups.set(group, (keys = new Set()));
      keys.add(key);
    },
  };
}
