import { sql, type Kysely } from "kysely";

// Every app instance keeps the sessions it has checked in memory (services/web/session-cache.server.ts, ADR 0038),
// so it must hear at once when one ends or changes anywhere: a logout, an idle or absolute end, an admin's "end
// session", an account deleted, or an operator's statement. The database says so itself, whatever wrote the row:
// a notice on the channel `skribent_sessions` naming the session (its id hash), the user ("user:<id>", when the
// name or e-mail address a session shows changes) or all of them ("*", a truncate). PostgreSQL delivers it to every
// instance listening; PGlite to the one process that embeds it.
export async function up(db: Kysely<unknown>) {
  await sql`
    create function skribent_session_notice() returns trigger language plpgsql as $$
    begin
      if tg_op = 'TRUNCATE' then
        perform pg_notify('skribent_sessions', '*');
      elsif tg_table_name = 'sessions' then
        perform pg_notify('skribent_sessions', old.id_hash);
      else
        perform pg_notify('skribent_sessions', 'user:' || old.id::text);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger sessions_notice after update or delete on sessions
    for each row execute function skribent_session_notice()`.execute(db);
  await sql`
    create trigger sessions_truncate_notice after truncate on sessions
    for each statement execute function skribent_session_notice()`.execute(db);
  await sql`
    create trigger users_session_notice after update of email, email_verified, name on users
    for each row when (old.email is distinct from new.email or old.email_verified is distinct from new.email_verified
      or old.name is distinct from new.name)
    execute function skribent_session_notice()`.execute(db);
}

export async function down(db: Kysely<unknown>) {
  await sql`drop trigger if exists users_session_notice on users`.execute(db);
  await sql`drop trigger if exists sessions_truncate_notice on sessions`.execute(db);
  await sql`drop trigger if exists sessions_notice on sessions`.execute(db);
  await sql`drop function if exists skribent_session_notice()`.execute(db);
}
