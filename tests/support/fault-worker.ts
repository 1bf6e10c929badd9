import { getConfig } from "~/services/config/config.server";
import { openDatabase, setDatabase } from "~/models/db.server";
import { setJobs } from "~/services/jobs/queue.server";
import { startJobs } from "~/services/jobs/registry.server";
import { createStorage, setStorage } from "~/services/storage/storage.server";

// `npm run worker` as the fault suite runs it in a child process (tests/support/fault-worker-process.ts): what
// app/worker.server.ts does — the real queue and job code, the engines its configuration names — less the
// migrations (the test's database is migrated), the cron and the signal handling (a SIGKILL never reaches it).
// The embedded database serves few connections, so the test sets the pool size.

const config = getConfig();
const database = await openDatabase({
  kind: "postgres",
  url: config.databaseUrl!,
  poolSize: Number(process.env.FAULT_WORKER_POOL_SIZE ?? "1"),
});
setDatabase(database);
setStorage(createStorage(config.storage));
setJobs(await startJobs({ pool: database.pool, work: true, schedule: false }));
console.log("[worker] started");
