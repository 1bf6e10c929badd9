// Each instance keeps the sessions it has checked (ADR 0038): a session ended on one instance — a logout, the idle
// end, an admin's, an operator's statement — must be refused on every instance at once (issue 26: within a second).
// The database's notices tell them (migration 0025); here two sessions of their own, each checked on both instances
// first, are ended one way each, and both instances are asked right after.
import pg from "pg";
import { call, signIn } from "./client.mjs";
import { baseEnv } from "./instances.mjs";
import { check, endStep, note, step } from "./report.mjs";

/** The session (its cookie) checked on A and on B — kept by both. */
async function checkedOnBoth(cookie) {
  const seen = new Set();
  for (let i = 0; i < 4; i++) seen.add((await call("GET", "/api/prompts", { headers: { cookie } })).instance);
  check(seen.has("A") && seen.has("B"), `the session was checked only by ${[...seen].join()}`);
}

/** Both instances refuse the session at the next requests after `since`; how long after it they did. */
async function refusedOnBoth(cookie, since) {
  const refused = new Set();
  for (let i = 0; i < 2; i++)
    refused.add((await call("GET", "/api/prompts", { headers: { cookie }, expect: [401] })).instance);
  const ms = Date.now() - since;
  check(refused.has("A") && refused.has("B"), `only ${[...refused].join()} was asked`);
  check(ms < 1_000, `refused on both only ${ms} ms after the end`);
  return ms;
}

export async function sessionsEndEverywhere() {
  step("a session ended on one instance is refused by both at once (each keeps the sessions it checked)");
  const db = new pg.Client({ connectionString: baseEnv.DATABASE_URL });
  await db.connect();
  try {
    const loggingOut = await signIn("anna-berger");
    await checkedOnBoth(loggingOut);
    const logout = await call("POST", "/logout", {
      headers: { cookie: loggingOut, "content-type": "application/x-www-form-urlencoded" },
      body: "",
      expect: [302, 303],
    });
    note(`logout answered by ${logout.instance}; both refused ${await refusedOnBoth(loggingOut, Date.now())} ms later`);

    const idle = await signIn("anna-berger");
    await checkedOnBoth(idle);
    // What 31 minutes without a request leave behind: the newest session's last use, 31 minutes ago.
    const touched = await db.query(
      `update sessions set last_seen_at = now() - interval '31 minutes'
         where id_hash = (select id_hash from sessions order by created_at desc limit 1)`,
    );
    check(touched.rowCount === 1, "no session to age");
    note(`idle for 31 minutes (set in the database): both refused ${await refusedOnBoth(idle, Date.now())} ms later`);
  } finally {
    await db.end();
  }
  endStep();
}
