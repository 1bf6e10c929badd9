import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { setupTestDatabase } from "../setup/db";

const t = setupTestDatabase();

describe("database", () => {
  it("is migrated and enforces the SPEC §4 statuses", async () => {
    const user = await t.db
      .insertInto("users")
      .values({ issuer: "https://idp.example", subject: "s1", email: "a@b.example" })
      .returning("id")
      .executeTakeFirstOrThrow();
    await t.db
      .insertInto("recordings")
      .values({
        owner_id: user.id,
        storage_key: "audio/x/1",
        original_filename: "a.wav",
        language_code: "de-DE",
        tags: "[]",
      })
      .execute();
    await expect(
      t.db
        .insertInto("recordings")
        .values({
          owner_id: user.id,
          storage_key: "audio/x/2",
          original_filename: "b.wav",
          language_code: "de-DE",
          tags: "[]",
          transcription_status: "done" as never,
        })
        .execute(),
    ).rejects.toThrow(/check constraint/);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from recordings`.execute(t.db);
    expect(rows[0].n).toBe(1);
  });

  it("keeps one session per transaction: a rolled back write is gone", async () => {
    await t.db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto("users").values({ issuer: "i", subject: "rollback" }).execute();
        throw new Error("abort");
      })
      .catch(() => {});
    const row = await t.db.selectFrom("users").where("subject", "=", "rollback").select("id").executeTakeFirst();
    expect(row).toBeUndefined();
  });
});
