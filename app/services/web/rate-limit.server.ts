import { sql } from "kysely";
import { auditAccess } from "../audit/events.server";
import { getDb } from "../../models/db.server";

// Fixed-window counters in the database so that every app instance shares them
// (ARCHITECTURE.md). Per user once signed in; per IP (or a coarser key) before.

export type RateLimitResult = { allowed: boolean; remaining: number; retryAfterSeconds: number };

export async function hitRateLimit(args: {
  bucket: string;
  limit: number;
  windowSeconds: number;
  /** Whose limit it is: the first refusal of a window is audited as `rate-limit.<bucket's kind>`, denied. */
  userId?: string;
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
  // A refusal is a security event (ASVS 16.3.3), but a script hammering the door must not fill the audit trail:
  // one row per user, kind and window, at the first refusal.
  if (args.userId && row.hits === args.limit + 1)
    await auditAccess(undefined, args.userId, `rate-limit.${args.bucket.split(":")[0]}`, "denied");
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
