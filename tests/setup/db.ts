import fs from "node:fs";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { openDatabase, setDatabase, type DatabaseHandle } from "~/models/db.server";
import { withDatabase } from "./global-db";

// A fresh, migrated database for each test file (so tests never share rows
// across files): a PGlite clone of the migrated template, or a PostgreSQL
// database created from the template database.

export async function createTestDatabase(): Promise<DatabaseHandle> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  const template = process.env.SKRIBENT_TEST_PG_TEMPLATE;
  if (adminUrl && template) {
    const name = `skribent_t_${process.ppid}_${randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${name} template ${template}`);
    await admin.end();
    const handle = await openDatabase({ kind: "postgres", url: withDatabase(adminUrl, name), poolSize: 4 });
    return {
      ...handle,
      async close() {
        await handle.close();
        const client = new pg.Client({ connectionString: adminUrl });
        await client.connect();
        await client.query(`drop database if exists ${name} with (force)`);
        await client.end();
      },
    };
  }
  const dump = process.env.SKRIBENT_TEST_PGLITE_DUMP;
  if (!dump) throw new Error("tests/setup/global-db.ts did not run");
  return openDatabase({ kind: "pglite", loadDataDir: new Blob([fs.readFileSync(dump)]) });
}

/** Installs a fresh database as the app's database for the current test file. */
export function setupTestDatabase() {
  const ref: { current: DatabaseHandle | undefined } = { current: undefined };
  beforeAll(async () => {
    ref.current = await createTestDatabase();
    setDatabase(ref.current);
  });
  afterAll(async () => {
    setDatabase(undefined);
    await ref.current?.close();
  });
  return {
    get handle() {
      if (!ref.current) throw new Error("test database not ready");
      return ref.current;
    },
    get db() {
      return this.handle.db;
    },
  };
}
