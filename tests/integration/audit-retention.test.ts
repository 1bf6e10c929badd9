import { describe, expect, it } from "vitest";
import { buildConfig, ConfigError, getConfig, parseEnv, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { runExpireSessions } from "~/services/jobs/registry.server";
import { setupTestApp, signedInUser } from "../setup/app";

// AUDIT_RETENTION_DAYS (issue 9 "Data lifecycle"; docs/data-protection.md § 3): audit rows hold a user id and a
// client address, so an operator whose record-keeping duties allow it can have them deleted after a period. The
// maintenance job deletes the rows past it and leaves one row saying how many went; without a period nothing goes.
setupTestApp();

const DAY = 86_400_000;

async function auditRow(userId: string, action: string, ageDays: number) {
  await getDb()
    .insertInto("audit_events")
    .values({
      user_id: userId,
      action,
      entity_type: null,
      entity_id: null,
      outcome: "success",
      ip: "192.0.2.7",
      request_id: null,
      at: new Date(Date.now() - ageDays * DAY),
    })
    .execute();
}

const actionsOf = async (userId: string) =>
  (await getDb().selectFrom("audit_events").where("user_id", "=", userId).select("action").orderBy("at").execute()).map(
    (row) => row.action,
  );
const cuts = async () =>
  getDb().selectFrom("audit_events").where("action", "=", "audit.retention").select("entity_id").execute();

describe("audit retention", () => {
  it("keeps every audit row when no period is set", async () => {
    const { user } = await signedInUser({ email: "immer@praxis.example" });
    await auditRow(user.id, "recording.play", 4000);
    expect((await runExpireSessions()).auditTrail).toEqual({ auditEvents: 0 });
    expect(await actionsOf(user.id)).toContain("recording.play");
    expect(await cuts()).toEqual([]);
  });

  it("deletes the rows older than the period, keeps the newer ones, and records the cut once", async () => {
    const config = getConfig();
    setConfig({ ...config, auditRetentionMs: 365 * DAY });
    try {
      const { user } = await signedInUser({ email: "protokoll@praxis.example" });
      const { user: other } = await signedInUser({ email: "andere@praxis.example" });
      await auditRow(user.id, "letter.read", 400);
      await auditRow(other.id, "recording.play", 366);
      await auditRow(user.id, "letter.save", 364);
      const before = (
        await getDb()
          .selectFrom("audit_events")
          .select("id")
          .where("at", "<", new Date(Date.now() - 365 * DAY))
          .execute()
      ).length;

      const first = await runExpireSessions();
      expect(first.auditTrail.auditEvents).toBe(before);
      expect(before).toBeGreaterThanOrEqual(2);
      expect(await actionsOf(user.id)).not.toContain("letter.read");
      expect(await actionsOf(user.id)).toContain("letter.save");
      expect(await actionsOf(other.id)).not.toContain("recording.play");
      expect(await cuts()).toEqual([{ entity_id: String(before) }]);

      // Nothing more is due: the next run deletes nothing and adds no second row.
      expect((await runExpireSessions()).auditTrail).toEqual({ auditEvents: 0 });
      expect(await cuts()).toHaveLength(1);
    } finally {
      setConfig(config);
    }
  });

  it("refuses a period shorter than 30 days at start", () => {
    const base = { DATA_DIR: "/tmp/skribent-config-test", COOKIE_SECRET: "c".repeat(32) };
    expect(buildConfig(parseEnv({ ...base, AUDIT_RETENTION_DAYS: "90" })).auditRetentionMs).toBe(90 * DAY);
    expect(() => parseEnv({ ...base, AUDIT_RETENTION_DAYS: "7" })).toThrow(ConfigError);
  });
});
