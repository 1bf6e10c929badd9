import { ConfigError, getConfig, type Config } from "./config/config.server";
import {
  databaseOptions,
  migrateToLatest,
  openDatabase,
  upkeepEmbeddedDatabase,
  setDatabase,
  type DatabaseHandle,
} from "../models/db.server";
import { setJobs, type JobsHandle } from "./jobs/queue.server";
import { startJobs } from "./jobs/registry.server";
import { startModelDownloads, stopModelDownloads } from "./model-store/downloads.server";
import { createStorage, setStorage } from "./storage/storage.server";

// Start-up of one app process (ADR 0001): configuration, database and
// migrations, object storage, the development identity provider (never in
// production, never when an issuer is configured) and the in-process worker.

type Running = { config: Config; database: DatabaseHandle; jobs: JobsHandle; stopProvider?: () => Promise<void> };

let booted: Promise<Running> | undefined;

export function boot() {
  booted ??= start().catch((error) => {
    if (error instanceof ConfigError) {
      console.error(error.message);
    } else {
      console.error("[boot] Skribent could not start:", error instanceof Error ? error.message : error);
    }
    process.exit(1);
  });
  return booted;
}

async function start(): Promise<Running> {
  const config = getConfig();
  const database = await openDatabase(databaseOptions(config));
  setDatabase(database);
  await migrateToLatest(database.db);
  // A data directory from an earlier version, a restore or a copy has no planner statistics yet (PGlite only).
  await upkeepEmbeddedDatabase(database, { vacuum: false });
  setStorage(createStorage(config.storage));

  let stopProvider: (() => Promise<void>) | undefined;
  if (config.oidc.dev) {
    const { startDevOidcProvider } = await import("./dev-oidc/provider.server");
    const provider = await startDevOidcProvider({
      issuer: config.oidc.issuer,
      port: config.oidc.devPort,
      audience: config.oidc.audience,
      apiScope: config.oidc.apiScope,
      clients: [
        {
          client_id: config.oidc.clientId,
          client_secret: config.oidc.clientSecret,
          redirect_uris: [`${config.appUrl}/auth/callback`],
          post_logout_redirect_uris: [`${config.appUrl}/login?signedOut=1`],
        },
      ],
    });
    stopProvider = provider.close;
    console.log(`[boot] development sign-in provider at ${provider.issuer} (demo accounts, see README)`);
  }

  const jobs = await startJobs({ pool: database.pool, work: config.workerInProcess });
  setJobs(jobs);
  console.log(
    `[boot] Skribent ${config.env} on ${config.appUrl} — database: ${database.kind}, storage: ${config.storage.kind}, worker: ${config.workerInProcess ? "in-process" : "separate"}`,
  );

  // The local engines' models: fetched in the background when missing; the app answers meanwhile (issue 21).
  if (config.models.needed.length > 0) void startModelDownloads(config.models);

  const running: Running = { config, database, jobs, stopProvider };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void shutdown(running));
  }
  return running;
}

async function shutdown(running: Running) {
  // An unclosed PGlite keeps Node alive (STACK-NOTES pitfall 3).
  const force = setTimeout(() => process.exit(1), 15_000);
  force.unref();
  try {
    // No more takeovers of other instances' runs, then this instance's own runs end (ADR 0013).
    (await import("./live/runner-takeover.server")).stopTakeovers();
    await (await import("./live/runner.server")).closeAllRuns();
    await (await import("./live/bus.server")).stopBus();
    await stopModelDownloads();
    await running.jobs.stop();
    // Usage rows are written without waiting: the last ones go in before the database closes.
    await (await import("./admin/usage.server")).settleMetering();
    await running.stopProvider?.();
    await running.database.close();
  } finally {
    process.exit(0);
  }
}
