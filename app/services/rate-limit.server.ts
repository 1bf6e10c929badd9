import { sql } from "kysely";
import { getDb } from "./db.server";

// Fixed-window counters in the database so that every app instance shares them
// (ARCHITECTURE.md). Per user once signed in; per IP (or a coarser key) before.

export type RateLimitResult = { allowed: boolean; remaining: number; retryAfterSeconds: number };

export async function hitRateLimit(args: {
  bucket: string;
  limit: number;
  windowSeconds: number;
  now?: Date;
}): Promise<RateLimitResult> {
  const now = args.now ?? new Date();
  const windowMs = args.windowSeconds * 1000;
  const windowStart = new Date(Math.floor(now.getTime() / windowMs) * windowMs);
  const row = await getDb()
    .insertInto("rate_limits")
    .values({ bucket: args.bucket, window_start: windowStart, hits: 1 })
    .onConflict((oc) => oc.columns(["bucket", "window_start"]).doUpdateSet({ hits: sql`rate_limits.hits + 1` }))
    .returning("hits")
    .executeTakeFirstOrThrow();
  const retryAfterSeconds = Math.ceil((windowStart.getTime() + windowMs - now.getTime()) / 1000);
  return {
    allowed: row.hits <= args.limit,
    remaining: Math.max(0, args.limit - row.hits),
    retryAfterSeconds,
  };
}

export async function pruneRateLimits({ before }: { before: Date }) {
  const result = await getDb().deleteFrom("rate_limits").where("window_start", "<", before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
