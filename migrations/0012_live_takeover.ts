import { sql, type Kysely } from "kysely";

// A live run survives the crash of the instance that runs it (ADR 0013 "Takeover"). Append-only (STYLE.md §15).
// live_sessions gains how far recognition reached, so a run that takes over re-feeds the engine from there and
// not from what was stored, and how far usage was metered, so every second is metered once across runs:
// - recognised_samples: the end, on the session's time line in samples, of what is final — the end of the last
//   final word stored, or of the audio a run saw through to EndOfTranscript;
// - recognised_seq: buffers 1…recognised_seq were recognised to their end (a run saw them to EndOfTranscript);
// - metered_samples: the session's audio up to here has been metered (live-usage.server.ts).
// Sessions of the old rules resumed after what was stored, so theirs is all recognised and metered.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .alterTable("live_sessions")
    .addColumn("recognised_samples", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("recognised_seq", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("metered_samples", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`
    update live_sessions
    set recognised_samples = samples, recognised_seq = buffers, metered_samples = samples`.execute(db);
}

export async function down(db: Kysely<unknown>) {
  await db.schema
    .alterTable("live_sessions")
    .dropColumn("metered_samples")
    .dropColumn("recognised_seq")
    .dropColumn("recognised_samples")
    .execute();
}
