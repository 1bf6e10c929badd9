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
app.all("*", createRequestHandler({ build, mode: process.env.NODE_ENV }));

const port = Number(process.env.PORT ?? 3000);
const onListen = () => console.log(`[server] http://localhost:${port}`);
const server = process.env.HOST ? app.listen(port, process.env.HOST, onListen) : app.listen(port, onListen);
server.on("upgrade", (req, socket, head) => void build.entry.module.handleLiveUpgrade(req, socket, head));

for (const signal of ["SIGTERM", "SIGINT"]) process.once(signal, () => server.close());
