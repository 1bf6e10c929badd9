import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { getDatabase, getDb } from "~/models/db.server";
import { runDatabaseUpkeep } from "~/services/jobs/registry.server";
import { signedInUser } from "../setup/app";
import { setupTestDatabase } from "../setup/db";

// The embedded PGlite has no autovacuum: without the hourly upkeep its planner believes every table is empty for
// ever, and the lists of a clinician with many recordings were joined row by row (issue 9). PostgreSQL does this
// itself, so there the upkeep does nothing.
setupTestDatabase();

async function plannerRows(table: string) {
  const { rows } = await sql<{ reltuples: number }>`select reltuples from pg_class where relname = ${table}`.execute(
    getDb(),
  );
  return Number(rows[0].reltuples);
}

describe("embedded database upkeep", () => {
  it("gives the planner the tables' real size on PGlite and leaves PostgreSQL to its autovacuum", async () => {
    const { user } = await signedInUser({ email: "upkeep@praxis.example" });
    await sql`
      insert into recordings (owner_id, storage_key, original_filename, language_code, upload_status, tags)
      select ${user.id}, 'audio/' || ${user.id} || '/20261120-' || lpad(n::text, 6, '0') || '-x.wav', 'a.wav',
        'de-DE', 'ready', '[]'
      from generate_series(1, 400) as n`.execute(getDb());

    const took = await runDatabaseUpkeep();
    if (getDatabase().kind === "postgres") {
      expect(took).toBeNull();
      return;
    }
    expect(took).toBeGreaterThanOrEqual(0);
    expect(await plannerRows("recordings")).toBe(400);
    // The plan for a page of the list now knows there are hundreds of rows, not one.
    const { rows } = await sql<{ "QUERY PLAN": string }>`
      explain select id from recordings where owner_id = ${user.id} and upload_status = 'ready'`.execute(getDb());
    expect(Number(/rows=(\d+)/.exec(rows[0]["QUERY PLAN"])?.[1])).toBeGreaterThan(100);
  });
});
