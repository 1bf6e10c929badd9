import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { migrateToLatest, openDatabase } from "~/models/db.server";

// Runs once per `vitest run`: migrates a template database so that each test
// file can start from a fresh, already-migrated copy in well under a second
// (STACK-NOTES pitfall 3). PGlite by default; PostgreSQL when TEST_DATABASE_URL
// names a server (an admin connection, e.g. postgres://postgres@127.0.0.1:5432/postgres).

export default async function setup() {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const template = `skribent_tpl_${process.pid}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${template}`);
    await admin.query(`create database ${template}`);
    await admin.end();
    const handle = await openDatabase({ kind: "postgres", url: withDatabase(adminUrl, template), poolSize: 2 });
    await migrateToLatest(handle.db);
    await handle.close();
    process.env.SKRIBENT_TEST_PG_TEMPLATE = template;
    return async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      const { rows } = await client.query<{ datname: string }>(
        `select datname from pg_database where datname like $1`,
        [`skribent_t_${process.pid}_%`],
      );
      for (const { datname } of rows) await client.query(`drop database if exists ${datname} with (force)`);
      await client.query(`drop database if exists ${template} with (force)`);
      await client.end();
    };
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-tpl-"));
  const handle = await openDatabase({ kind: "pglite" });
  await migrateToLatest(handle.db);
  const dumpFile = path.join(dir, "template.tar.gz");
  const dump = await handle.dumpDataDir!();
  fs.writeFileSync(dumpFile, Buffer.from(await dump.arrayBuffer()));
  await handle.close();
  process.env.SKRIBENT_TEST_PGLITE_DUMP = dumpFile;
  return () => fs.rmSync(dir, { recursive: true, force: true });
}

export function withDatabase(url: string, database: string) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
