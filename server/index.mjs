// Skribent's HTTP server (ADR 0013, replacing ADR 0001's remix-serve): what remix-serve did — compression,
// static files, the Remix request handler — plus the WebSocket upgrade of the live door (/live/ws), which
// remix-serve cannot hand over (all in server/app.mjs). The build boots the app when it is imported (ADR 0001's
// start-up stays).
//   node server/index.mjs            (npm start builds first)
// PORT (default 3000) and HOST as before; LOG_FORMAT json (default) or text; TLS_CERT_FILE and TLS_KEY_FILE (both
// or neither): HTTPS instead of HTTP on that port (server/tls.mjs, ADR 0022); LOG_SYSLOG_URL: every log entry also
// goes to a syslog collector over TLS (server/log-ship.mjs, ADR 0023).
import path from "node:path";
import { pathToFileURL } from "node:url";
import { installGlobals } from "@remix-run/node";
import { createServerApp } from "./app.mjs";
import { listen } from "./listen.mjs";
import { installStructuredConsole } from "./log.mjs";
import { LogShipSettingsError, startLogShipping } from "./log-ship.mjs";
import { readTlsSettings, TlsSettingsError } from "./tls.mjs";

process.env.NODE_ENV = process.env.NODE_ENV ?? "production";
// Before the build is imported: its boot logs too (LOG_FORMAT, server/log.mjs).
installStructuredConsole();

// Also before the build: a wrong TLS or log shipping setting stops the start before the boot opens the database,
// with the boot's readable list (config/config.server.ts), not a stack trace; the boot's entries are shipped too.
let tls;
let shipping;
try {
  tls = readTlsSettings();
  shipping = startLogShipping();
} catch (error) {
  const readable = error instanceof TlsSettingsError || error instanceof LogShipSettingsError;
  console.error(readable ? error.message : error);
  process.exit(1);
}

const build = await import(pathToFileURL(path.resolve("build/index.js")).href);
installGlobals({ nativeFetch: build.future.v3_singleFetch });

// Everything between the socket and the app (static files, the checks before Remix, the live door's upgrade) is in
// server/app.mjs; how it listens and stops in server/listen.mjs.
const { app, upgrade } = createServerApp({ build, instanceName: process.env.INSTANCE_NAME });

const port = Number(process.env.PORT ?? 3000);
const { drain } = await listen({ app, upgrade, port, host: process.env.HOST, tls });
console.log(`[server] ${tls ? "https" : "http"}://localhost:${port}`);

// On SIGTERM/SIGINT: the graceful stop (server/listen.mjs), and only then the app's own shutdown (boot.server.ts:
// live runs, worker, database), which the build registered for these signals when it was imported. It ends with
// process.exit: with LOG_SYSLOG_URL, what is still queued for the collector goes first (at most 2 s).
for (const signal of ["SIGTERM", "SIGINT"]) {
  const appShutdown = process.listeners(signal);
  for (const listener of appShutdown) process.removeListener(signal, listener);
  process.once(
    signal,
    () =>
      void drain().then(() => {
        const exit = process.exit;
        if (shipping) {
          const flushing = shipping;
          process.exit = (code) => void flushing.close(2000).then(() => exit.call(process, code));
        }
        if (appShutdown.length === 0) process.exit(0);
        for (const listener of appShutdown) listener(signal);
      }),
  );
}
