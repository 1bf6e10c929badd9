// Skribent's HTTP server (ADR 0013, replacing ADR 0001's remix-serve): what remix-serve did — compression,
// static files, the Remix request handler — plus the WebSocket upgrade of the live door (/live/ws), which
// remix-serve cannot hand over (all in server-app.mjs). The build boots the app when it is imported (ADR 0001's
// start-up stays).
//   node server.mjs            (npm start builds first)
// PORT (default 3000) and HOST as before; LOG_FORMAT json (default) or text.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { installGlobals } from "@remix-run/node";
import { createServerApp } from "./server-app.mjs";
import { installStructuredConsole } from "./server-log.mjs";

process.env.NODE_ENV = process.env.NODE_ENV ?? "production";
// Before the build is imported: its boot logs too (LOG_FORMAT, server-log.mjs).
installStructuredConsole();

const build = await import(pathToFileURL(path.resolve("build/index.js")).href);
installGlobals({ nativeFetch: build.future.v3_singleFetch });

// Everything between the socket and the app (static files, the checks before Remix, the live door's upgrade) is in
// server-app.mjs; this file listens and stops.
const { app, upgrade } = createServerApp({ build, instanceName: process.env.INSTANCE_NAME });

const port = Number(process.env.PORT ?? 3000);
const onListen = () => console.log(`[server] http://localhost:${port}`);
const server = process.env.HOST ? app.listen(port, process.env.HOST, onListen) : app.listen(port, onListen);
server.on("upgrade", (req, socket, head) => void upgrade(req, socket, head));

// A graceful stop (README "Production topology"): a load balancer's instance is stopped while requests are in
// flight on it (a refinement waiting for the model, an upload check). On SIGTERM/SIGINT the server stops
// accepting connections and lets the requests it has finish — at most DRAIN_MS; server-sent event streams are
// not waited for, their clients reconnect elsewhere — and only then runs the app's own shutdown (boot.server.ts:
// live runs, worker, database), which the build registered for these signals when it was imported.
const DRAIN_MS = 20_000;
const open = new Set();
let draining = false;
server.on("request", (req, res) => {
  open.add(res);
  res.once("close", () => open.delete(res));
  // Keep-alive connections end with this answer, so the balancer sends the next request elsewhere.
  if (draining) res.setHeader("Connection", "close");
});
const streaming = (res) => String(res.getHeader("Content-Type") ?? "").startsWith("text/event-stream");

async function drain() {
  draining = true;
  server.close();
  const until = Date.now() + DRAIN_MS;
  while (Date.now() < until && [...open].some((res) => !streaming(res))) {
    server.closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const signal of ["SIGTERM", "SIGINT"]) {
  const appShutdown = process.listeners(signal);
  for (const listener of appShutdown) process.removeListener(signal, listener);
  process.once(
    signal,
    () =>
      void drain().then(() => {
        if (appShutdown.length === 0) process.exit(0);
        for (const listener of appShutdown) listener(signal);
      }),
  );
}
