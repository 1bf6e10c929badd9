import { installStructuredConsole } from "../server/log.mjs";
import { LogShipSettingsError, startLogShipping } from "../server/log-ship.mjs";
import { ConfigError, getConfig } from "./services/config/config.server";
import { migrateToLatest, openDatabase, setDatabase } from "./models/db.server";
import { setJobs } from "./services/jobs/queue.server";
import { startJobs } from "./services/jobs/registry.server";
import { startModelDownloads, stopModelDownloads } from "./services/model-store/downloads.server";
import { createStorage, setStorage } from "./services/storage/storage.server";
import { settleMetering } from "./services/admin/usage.server";

// `npm run worker`: the job worker as its own process, for scaling out. The
// embedded PGlite belongs to one process, so this needs DATABASE_URL.

// LOG_SYSLOG_URL: the worker's entries go to the collector too (server/log-ship.mjs); what is queued is sent before
// the worker exits (at most 2 s).
let shipping: ReturnType<typeof startLogShipping>;

async function exit(code: number): Promise<never> {
  await shipping?.close(2000);
  process.exit(code);
}

async function main() {
  installStructuredConsole();
  shipping = startLogShipping();
  const config = getConfig();
  if (!config.databaseUrl) {
    console.error(
      "The stand-alone worker needs PostgreSQL: set DATABASE_URL. With the embedded database the worker runs inside `npm start`.",
    );
    return exit(2);
  }
  const database = await openDatabase({ kind: "postgres", url: config.databaseUrl });
  setDatabase(database);
  await migrateToLatest(database.db);
  // What boot() sets up for a web process, less the HTTP side: the jobs read and write objects (audio for the
  // engines, transcripts, letters), and queue further jobs (a letter once its transcript is done, a retry).
  setStorage(createStorage(config.storage));
  const jobs = await startJobs({ pool: database.pool, work: true });
  setJobs(jobs);
  // The worker runs the engines, so it fetches their missing models too (a lock shares the work with web
  // instances that use the same models directory).
  if (config.models.needed.length > 0) void startModelDownloads(config.models);
  console.log("[worker] started");
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, async () => {
      await stopModelDownloads();
      await jobs.stop();
      await settleMetering();
      await database.close();
      await exit(0);
    });
  }
}

main().catch(async (error) => {
  console.error(error instanceof ConfigError || error instanceof LogShipSettingsError ? error.message : error);
  await exit(1);
});
