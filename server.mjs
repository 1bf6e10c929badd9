// Skribent's HTTP server (ADR 0013, replacing ADR 0001's remix-serve): what remix-serve did — compression,
// static files, the Remix request handler — plus the WebSocket upgrade of the live door (/live/ws), which
// remix-serve cannot hand over. The build boots the app when it is imported (ADR 0001's start-up stays).
//   node server.mjs            (npm start builds first)
// PORT (default 3000) and HOST as before.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createRequestHandler } from "@remix-run/express";
import { installGlobals } from "@remix-run/node";
import compression from "compression";
import express from "express";
import morgan from "morgan";

process.env.NODE_ENV = process.env.NODE_ENV ?? "production";

const build = await import(pathToFileURL(path.resolve("build/index.js")).href);
installGlobals({ nativeFetch: build.future.v3_singleFetch });

function noCache(res) {
  res.setHeader("Cache-Control", "no-cache");
}

const app = express();
app.disable("x-powered-by");
// Behind a load balancer, which app instance answered (scripts/scale-out.mjs, README "Production topology"):
// only when the operator names the instance, so a default deployment says nothing about its processes.
const instanceName = process.env.INSTANCE_NAME;
if (instanceName) {
  app.use((_req, res, next) => {
    res.setHeader("X-Skribent-Instance", instanceName);
    next();
  });
}
// Server-sent events must reach the browser as they are written: never buffer them for compression.
app.use(
  compression({
    filter: (req, res) =>
      !String(res.getHeader("Content-Type") ?? "").startsWith("text/event-stream") && compression.filter(req, res),
  }),
);
app.use(build.publicPath, express.static(build.assetsBuildDirectory, { immutable: true, maxAge: "1y" }));
// The live client (public/live) must match the server it talks to: after a deploy a cached copy would speak to
// the new server for up to an hour, so the browser asks again each time (a 304 when nothing changed).
app.use("/live", express.static("public/live", { cacheControl: false, setHeaders: noCache }));
app.use(express.static("public", { maxAge: "1h" }));
// One line per request, as remix-serve wrote ("tiny") — except the live door's audio and event streams, a few a
// second — but without the query string: a signed storage URL's signature (sig=, X-Amz-Signature=), a sign-in's
// authorization code and a search's terms are all in it, and none of them belongs in a log (issue 9).
morgan.token("path", (req) => (req.originalUrl ?? req.url).split("?")[0]);
app.use(
  morgan(":method :path :status :res[content-length] - :response-time ms", {
    skip: (req) => /^\/live\/sessions\/[^/]+\/(audio|events)/.test(req.path),
  }),
);
// Methods the app answers; anything else (TRACE, CONNECT, made-up verbs) gets 405 here instead of failing inside
// the request adapter with a 500 (TRACE is a forbidden method for the Fetch API's Request).
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
app.use((req, res, next) => {
  if (METHODS.has(req.method)) return next();
  res.status(405).set({ Allow: [...METHODS].join(", "), "Content-Type": "text/plain; charset=utf-8" });
  res.end("Method not allowed");
});
// A state-changing request from another site, or a URL with a NUL, is refused before Remix routes it
// (entry.server.tsx). Only the headers the check and its audit row read are handed over, and never the body.
const CHECKED_HEADERS = ["origin", "sec-fetch-site", "authorization", "x-forwarded-for", "x-request-id", "user-agent"];
app.use((req, res, next) => {
  const headers = new Headers();
  for (const name of CHECKED_HEADERS) if (req.get(name) !== undefined) headers.set(name, req.get(name));
  const probe = new Request(`http://localhost${req.originalUrl}`, { method: req.method, headers });
  build.entry.module.refuseBeforeRouting(probe).then(async (refusal) => {
    if (!refusal) return next();
    res.status(refusal.status);
    refusal.headers.forEach((value, name) => res.setHeader(name, value));
    res.end(await refusal.text());
  }, next);
});
app.all("*", createRequestHandler({ build, mode: process.env.NODE_ENV }));

const port = Number(process.env.PORT ?? 3000);
const onListen = () => console.log(`[server] http://localhost:${port}`);
const server = process.env.HOST ? app.listen(port, process.env.HOST, onListen) : app.listen(port, onListen);
server.on("upgrade", (req, socket, head) => void build.entry.module.handleLiveUpgrade(req, socket, head));

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
