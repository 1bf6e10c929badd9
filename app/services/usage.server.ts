import { sql } from "kysely";
import { getDb } from "./db.server";

// One usage table for every adapter (ARCHITECTURE.md "Engines behind interfaces").
// `endpoint` is the SPEC §7 call name (e.g. "transcribe_v2", "medical-letter-v2");
// the admin dashboard only adds rows up.

export type UsageRecord = {
  userId: string;
  endpoint: string;
  units: number;
  unit: "call" | "audio_second" | "input_token" | "output_token" | "page" | "byte";
  /** Price of one unit in USD, from configuration. */
  unitPriceUsd: number;
};

export async function recordUsage(record: UsageRecord) {
  if (!Number.isFinite(record.units) || record.units < 0) throw new Error("usage units must be >= 0");
  await getDb()
    .insertInto("usage_events")
    .values({
      user_id: record.userId,
      endpoint: record.endpoint,
      units: record.units,
      unit: record.unit,
      cost_usd: roundUsd(record.units * record.unitPriceUsd),
    })
    .execute();
}

function roundUsd(value: number) {
  return Math.round(value * 1_000_000) / 1_000_000;
}

/** SPEC §3 "Usage dashboard user": endpoint call counts and costs per user. */
export async function usageByUser() {
  const rows = await getDb()
    .selectFrom("usage_events")
    .innerJoin("users", "users.id", "usage_events.user_id")
    .select([
      "users.id as userId",
      "users.name",
      "users.email",
      "usage_events.endpoint",
      sql<number>`count(*)::int`.as("calls"),
      sql<string>`sum(usage_events.cost_usd)`.as("cost"),
    ])
    .groupBy(["users.id", "users.name", "users.email", "usage_events.endpoint"])
    .orderBy("users.email")
    .execute();
  const byUser = new Map<
    string,
    { name: string | null; email: string | null; endpoints: Record<string, number>; costs: Record<string, number> }
  >();
  for (const row of rows) {
    const entry = byUser.get(row.userId) ?? { name: row.name, email: row.email, endpoints: {}, costs: { total: 0 } };
    entry.endpoints[row.endpoint] = row.calls;
    entry.costs[row.endpoint] = Number(row.cost);
    entry.costs.total = roundUsd(entry.costs.total + Number(row.cost));
    byUser.set(row.userId, entry);
  }
  return [...byUser.values()];
}
