import { installStructuredConsole } from "../server-log.mjs";
import { ConfigError, getConfig } from "./services/config.server";
import { migrateToLatest, openDatabase, setDatabase } from "./services/db.server";
import { setJobs, startJobs } from "./services/jobs.server";
import { createStorage, setStorage } from "./services/storage.server";
import { settleMetering } from "./services/usage.server";

// `npm run worker`: the job worker as its own process, for scaling out. The
// embedded PGlite belongs to one process, so this needs DATABASE_URL.

async function main() {
  installStructuredConsole();
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
  // What boot() sets up for a web process, less the HTTP side: the jobs read and write objects (audio for the
  // engines, transcripts, letters), and queue further jobs (a letter once its transcript is done, a retry).
  setStorage(createStorage(config.storage));
  const jobs = await startJobs({ pool: database.pool, work: true });
  setJobs(jobs);
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
