import { afterEach, describe, expect, it } from "vitest";
import { setDatabase, type DatabaseHandle } from "./db.server";
import type { NoticeListener, Notices } from "./db-notices.server";
import { keptStore } from "./kept.server";

// The rules of what an instance may keep (ADR 0038), against notices this test sends itself.

function fakeDatabase() {
  const listeners = new Set<NoticeListener>();
  const notices: Notices & { live: boolean } = {
    live: true,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    watch: async () => {},
    close: async () => {},
  };
  setDatabase({ notices } as unknown as DatabaseHandle);
  return {
    notice: (payload: string) => listeners.forEach((l) => l.notice(payload)),
    setLive(live: boolean) {
      notices.live = live;
      listeners.forEach((l) => l.reset(live));
    },
  };
}

afterEach(() => setDatabase(undefined));

const store = () => keptStore<string>({ groupPrefix: "owner:", maxAgeMs: 1_000, maxEntries: 3, maxWeight: 10 });

describe("keptStore", () => {
  it("keeps a value until a notice names it, its group or everything", () => {
    const db = fakeDatabase();
    const kept = store();
    kept.keep("a", "anna", "A", kept.ticket());
    kept.keep("b", "anna", "B", kept.ticket());
    kept.keep("c", "ben", "C", kept.ticket());
    expect([kept.get("a"), kept.get("b"), kept.get("c")]).toEqual(["A", "B", "C"]);
    db.notice("a");
    expect([kept.get("a"), kept.get("b"), kept.get("c")]).toEqual([undefined, "B", "C"]);
    db.notice("owner:anna");
    expect([kept.get("b"), kept.get("c")]).toEqual([undefined, "C"]);
    db.notice("*");
    expect(kept.get("c")).toBeUndefined();
  });

  it("does not keep what was read before a notice arrived", () => {
    const db = fakeDatabase();
    const kept = store();
    const ticket = kept.ticket();
    db.notice("owner:someone-else");
    kept.keep("a", "anna", "stale?", ticket);
    expect(kept.get("a")).toBeUndefined();
  });

  it("keeps and gives nothing while notices cannot be heard, and starts empty when they can again", () => {
    const db = fakeDatabase();
    const kept = store();
    kept.keep("a", "anna", "A", kept.ticket());
    db.setLive(false);
    expect(kept.get("a")).toBeUndefined();
    kept.keep("b", "anna", "B", kept.ticket());
    db.setLive(true);
    expect([kept.get("a"), kept.get("b")]).toEqual([undefined, undefined]);
  });

  it("lets a value age out, and keeps the newest within its count and weight", () => {
    fakeDatabase();
    const kept = store();
    kept.keep("old", "anna", "O", kept.ticket(), { now: 0 });
    expect(kept.get("old", 999)).toBe("O");
    expect(kept.get("old", 1_000)).toBeUndefined();
    for (const key of ["a", "b", "c", "d"]) kept.keep(key, "anna", key, kept.ticket());
    expect(["a", "b", "c", "d"].map((key) => kept.get(key))).toEqual([undefined, "b", "c", "d"]);
    kept.keep("heavy", "anna", "H", kept.ticket(), { weight: 9 });
    expect(["c", "d", "heavy"].map((key) => kept.get(key))).toEqual([undefined, "d", "H"]);
    kept.keep("too heavy", "anna", "T", kept.ticket(), { weight: 11 });
    expect(kept.get("too heavy")).toBeUndefined();
  });
});
