import { Migrator } from "kysely";
import { describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import { startSession } from "~/services/web/session.server";
import { MAX_SESSIONS_PER_USER } from "~/services/accounts/session-list.server";
import { migrations } from "../../migrations";
import {
  ACCOUNTS,
  AGENTS,
  browserWith,
  expectSignedIn,
  expectSignedOut,
  rowsOf,
  sessionsOf,
  sessionsPage,
  signIn,
  userIdOf,
} from "../support/session-browsers";
import { setupTestApp } from "../setup/app";

// The concurrent-session policy (ASVS 5.0 7.1.2, README "Sessions"): at most MAX_SESSIONS_PER_USER live sessions
// per account; a sign-in beyond it is never refused, the least recently used session ends instead. And migration
// 0014 keeps the sessions that exist when it runs.
const app = setupTestApp({ provider: true, env: { RATE_LIMIT_SIGNIN_PER_MINUTE: "1000" } });
const provider = () => ({
  issuer: app.issuer,
  clientId: app.config.oidc.clientId,
  clientSecret: app.config.oidc.clientSecret,
});

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

/** A session of the user started directly, last used `minutes` ago, and the browser that holds it. */
async function sessionUsed(userId: string, minutes: number) {
  const setCookie = await startSession({ userId, idToken: null, userAgent: AGENTS.safariIphone });
  const cookie = setCookie.split(";")[0];
  const browser = await browserWith([cookie], AGENTS.safariIphone);
  await getDb()
    .updateTable("sessions")
    .set({ last_seen_at: minutesAgo(minutes) })
    .where("last_seen_at", ">", minutesAgo(0.5))
    .where("user_id", "=", userId)
    .execute();
  return browser;
}

describe("the number of sessions per account", () => {
  it("ends the least recently used session when a sign-in goes past the cap, never the new one", async () => {
    expect(MAX_SESSIONS_PER_USER).toBe(10);
    const jonas = await signIn(provider(), ACCOUNTS.jonas, AGENTS.firefoxWindows);
    // Ten live sessions, the first last used 10 minutes ago, and two that are over (idle for 40 minutes): those
    // count for nothing.
    const first = await signIn(provider(), ACCOUNTS.anna, AGENTS.chromiumLinux);
    const annaId = await userIdOf(ACCOUNTS.anna);
    await getDb()
      .updateTable("sessions")
      .set({ last_seen_at: minutesAgo(10) })
      .where("user_id", "=", annaId)
      .execute();
    for (const over of [40, 41]) await sessionUsed(annaId, over);
    const others = [];
    for (let minutes = 9; minutes >= 1; minutes--) others.push(await sessionUsed(annaId, minutes));
    // (No page is loaded meanwhile: that would make the session recently used.)
    expect(await sessionsOf(ACCOUNTS.anna)).toHaveLength(12);

    const newest = await signIn(provider(), ACCOUNTS.anna, AGENTS.firefoxWindows);
    await expectSignedOut(first);
    for (const browser of [newest, ...others, jonas]) await expectSignedIn(browser);
    const rows = rowsOf(await sessionsPage(newest));
    expect(rows).toHaveLength(MAX_SESSIONS_PER_USER);
    expect(rows[0]).toMatchObject({ device: "Firefox · Windows", current: true });
    expect(rows.map((r) => r.device)).not.toContain("Chromium · Linux");

    const evicted = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "session.evicted")
      .select(["user_id", "entity_type", "outcome"])
      .execute();
    expect(evicted).toEqual([{ user_id: annaId, entity_type: "session", outcome: "success" }]);
  });
});

describe("migration 0014", () => {
  it("keeps the sessions that exist: each gets its own public id, no label, and stays signed in", async () => {
    await getDb().deleteFrom("sessions").execute();
    const a = await signIn(provider(), ACCOUNTS.anna, AGENTS.firefoxWindows);
    const b = await signIn(provider(), ACCOUNTS.anna, AGENTS.chromiumLinux);
    const migrator = new Migrator({ db: getDb(), provider: { getMigrations: async () => migrations } });
    const down = await migrator.migrateTo("0013_list_pages");
    expect(down.error).toBeUndefined();
    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();

    const rows = await sessionsOf(ACCOUNTS.anna);
    expect(rows.map((r) => r.device_label)).toEqual([null, null]);
    expect(new Set(rows.map((r) => r.public_id)).size).toBe(2);
    for (const row of rows) expect(row.public_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-/);
    const html = await sessionsPage(a);
    expect(rowsOf(html).map((r) => [r.device, r.current])).toEqual([
      ["Unbekanntes Gerät", true],
      ["Unbekanntes Gerät", false],
    ]);
    await expectSignedIn(b);
  });
});
