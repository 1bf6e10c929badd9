import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { buildConfig, parseEnv } from "~/services/config/config.server";
import { databaseOptions, embeddedSocketDir, openDatabase } from "~/models/db.server";

// A clone in a deeply nested folder (issue 22, finding 5): the embedded database's Unix socket no longer lives under
// DATA_DIR, whose path may be longer than a socket's 107 bytes, but in a private folder of its own under the temp
// folder. The app starts from any path, and another process of the machine finds the socket (the end-to-end tests'
// direct database access, psql) through the file DATA_DIR names it in.
const base = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-deep-"));

afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe("the embedded database in a deeply nested DATA_DIR", () => {
  it("starts, answers through its socket, lets another client in, and leaves no socket behind", async () => {
    const dataDir = path.join(base, ...Array.from({ length: 6 }, (_, i) => `a-clone-in-a-deeply-nested-folder-${i}`));
    expect(Buffer.byteLength(dataDir)).toBeGreaterThan(200);
    // The configuration boot() reads, with this DATA_DIR and no DATABASE_URL.
    const config = buildConfig(parseEnv({ ...process.env, DATA_DIR: dataDir, DATABASE_URL: undefined }));
    expect(config.dataDir).toBe(dataDir);

    // What a process killed by SIGKILL left behind: a folder whose socket answers nobody.
    const dead = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-db-"));
    fs.writeFileSync(path.join(dead, ".s.PGSQL.5432"), "");

    const database = await openDatabase(databaseOptions(config));
    expect(fs.existsSync(dead)).toBe(false);
    let socketDir: string | undefined;
    try {
      expect(database.kind).toBe("pglite");
      await sql`create table deep_check (note text)`.execute(database.db);
      await sql`insert into deep_check values ('durch den Socket')`.execute(database.db);

      // Short, private, and named in DATA_DIR for the other processes of the machine.
      socketDir = embeddedSocketDir(dataDir);
      expect(socketDir).toBeDefined();
      const socketPath = path.join(socketDir!, ".s.PGSQL.5432");
      expect(Buffer.byteLength(socketPath)).toBeLessThan(104);
      expect(fs.statSync(socketPath).isSocket()).toBe(true);
      expect(fs.statSync(socketDir!).mode & 0o777).toBe(0o700);
      expect(new URL(database.connectionString).hostname).toBe(encodeURIComponent(socketDir!));

      // Another client through the socket, as the end-to-end tests' direct access or psql connects.
      const client = new pg.Client({ host: socketDir, port: 5432, user: "postgres", database: "postgres" });
      await client.connect();
      try {
        const { rows } = await client.query("select note from deep_check");
        expect(rows).toEqual([{ note: "durch den Socket" }]);
      } finally {
        await client.end();
      }
    } finally {
      await database.close();
    }
    // Shut down: the socket's folder and the note naming it are gone.
    expect(fs.existsSync(socketDir!)).toBe(false);
    expect(embeddedSocketDir(dataDir)).toBeUndefined();
  });
});
