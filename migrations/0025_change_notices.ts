import { sql, type Kysely } from "kysely";

// Every app instance keeps what it has read of some rows in memory (ADR 0038): the sessions it has checked
// (services/web/session-cache.server.ts) and each clinician's lists (models/owner-cache.server.ts). So it must hear at
// once when such a row changes anywhere — a logout, an idle or absolute end, an admin's "end session", a deleted
// account, a job finishing on the worker, an operator's statement. The database says so itself, whatever wrote the
// row: a notice on the channel `skribent_changes` naming
// - the session (its id hash) when a session row is updated or deleted,
// - `user:<id>` when the name or e-mail address a session shows changes,
// - `owner:<id>` when a row of the tables the lists read changes for that clinician,
// - `*` when one of those tables is truncated.
// PostgreSQL delivers it to every instance listening (identical notices of one transaction once); PGlite to the one
// process that embeds it.

/** The tables the kept lists read, with the column that names their clinician. */
const OWNED: Array<[table: string, owner: string]> = [
  ["recordings", "owner_id"],
  ["transcripts", "owner_id"],
  ["letters", "owner_id"],
  ["transcription_jobs", "owner_id"],
  ["letter_jobs", "owner_id"],
  ["custom_templates", "owner_id"],
  ["user_template_collection", "user_id"],
  ["user_structures", "user_id"],
];

export async function up(db: Kysely<unknown>) {
  // tg_argv[0]: what the notice names — 'session', 'user', or the column of the clinician's id.
  await sql`
    create function skribent_change_notice() returns trigger language plpgsql as $$
    declare
      changed record;
    begin
      if tg_op = 'TRUNCATE' then
        perform pg_notify('skribent_changes', '*');
        return null;
      end if;
      if tg_op = 'INSERT' then
        changed := new;
      else
        changed := old;
      end if;
      if tg_argv[0] = 'session' then
        perform pg_notify('skribent_changes', changed.id_hash);
      elsif tg_argv[0] = 'user' then
        perform pg_notify('skribent_changes', 'user:' || changed.id::text);
      else
        perform pg_notify('skribent_changes', 'owner:' || (to_jsonb(changed) ->> tg_argv[0]));
        if tg_op = 'UPDATE' and (to_jsonb(new) ->> tg_argv[0]) is distinct from (to_jsonb(old) ->> tg_argv[0]) then
          perform pg_notify('skribent_changes', 'owner:' || (to_jsonb(new) ->> tg_argv[0]));
        end if;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger sessions_change_notice after update or delete on sessions
    for each row execute function skribent_change_notice('session')`.execute(db);
  await sql`
    create trigger users_change_notice after update of email, email_verified, name on users
    for each row when (old.email is distinct from new.email or old.email_verified is distinct from new.email_verified
      or old.name is distinct from new.name)
    execute function skribent_change_notice('user')`.execute(db);
  for (const [table, owner] of [["sessions", ""] as const, ...OWNED]) {
    await sql`
      create trigger ${sql.id(`${table}_truncate_notice`)} after truncate on ${sql.table(table)}
      for each statement execute function skribent_change_notice()`.execute(db);
    if (!owner) continue;
    await sql`
      create trigger ${sql.id(`${table}_change_notice`)} after insert or update or delete on ${sql.table(table)}
      for each row execute function skribent_change_notice(${sql.lit(owner)})`.execute(db);
  }
}

export async function down(db: Kysely<unknown>) {
  for (const [table] of [["sessions"], ...OWNED]) {
    await sql`drop trigger if exists ${sql.id(`${table}_truncate_notice`)} on ${sql.table(table)}`.execute(db);
    await sql`drop trigger if exists ${sql.id(`${table}_change_notice`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop trigger if exists users_change_notice on users`.execute(db);
  await sql`drop function if exists skribent_change_notice()`.execute(db);
}
