import { ConfigError, getConfig } from "./services/config.server";
import { migrateToLatest, openDatabase, setDatabase } from "./services/db.server";
import { startJobs } from "./services/jobs.server";
import { settleMetering } from "./services/usage.server";

// `npm run worker`: the job worker as its own process, for scaling out. The
// embedded PGlite belongs to one process, so this needs DATABASE_URL.

async function main() {
  const config = getConfig();
  if (!config.databaseUrl) {
    console.error(
      "The stand-alone worker needs PostgreSQL: set DATABASE_URL. With the embedded database the worker runs inside `npm start`.",
    );
    process.exit(2);
  }
  const database = await openDatabase({ kind: "postgres", url: config.databaseUrl });
  setDatabase(database);
  await migrateToLatest(database.db);
  const jobs = await startJobs({ pool: database.pool, work: true });
  console.log("[worker] started");
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, async () => {
      await jobs.stop();
      await settleMetering();
      await database.close();
      process.exit(0);
    });
  }
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
