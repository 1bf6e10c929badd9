import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { migrateToLatest, openDatabase } from "~/models/db.server";
import { buildConfig, parseEnv } from "~/services/config/config.server";
import { PRODUCTION_ENV } from "../support/config-helpers";
import { startCertPostgres, type CertPostgres } from "../support/postgres-cert";

// The app can sign in to PostgreSQL with a client certificate instead of a password (ASVS 5.0 13.2.1): libpq's
// sslcert/sslkey/sslrootcert in DATABASE_URL, read by node-postgres, against a real server that accepts the role only
// with a certificate of its CA (pg_hba `hostssl … cert`). A production configuration takes such a URL as it is.
let postgres: CertPostgres;

beforeAll(async () => {
  postgres = await startCertPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

describe("PostgreSQL with a client certificate", () => {
  it("signs in as the certificate's role over verified TLS, and migrates", async () => {
    const handle = await openDatabase({ kind: "postgres", url: postgres.url() });
    try {
      await migrateToLatest(handle.db);
      const { rows } = await sql<{ role: string; ssl: boolean; client_dn: string | null }>`
        select current_user as role, ssl, client_dn from pg_stat_ssl where pid = pg_backend_pid()`.execute(handle.db);
      expect(rows).toEqual([{ role: "skribent", ssl: true, client_dn: "/CN=skribent" }]);
      const tables = await sql<{ n: number }>`
        select count(*)::int as n from information_schema.tables where table_name = 'recordings'`.execute(handle.db);
      expect(tables.rows[0]!.n).toBe(1);
    } finally {
      await handle.close();
    }
  });

  it("is refused without the certificate: there is no password to fall back on", async () => {
    const handle = await openDatabase({ kind: "postgres", url: postgres.url({ withClientCertificate: false }) });
    try {
      await expect(handle.pool.query("select 1")).rejects.toThrow(/certificate/);
    } finally {
      await handle.close();
    }
  });

  it("is a production DATABASE_URL as it stands (TLS verified, no password)", () => {
    const config = buildConfig(
      parseEnv({
        ...PRODUCTION_ENV,
        DATABASE_URL: postgres.url().replace("127.0.0.1", "db.klinik.example"),
      }),
    );
    expect(new URL(config.databaseUrl!).password).toBe("");
  });
});
