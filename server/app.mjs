// The Express application of server/index.mjs (ADR 0013): compression, static files, the checks before Remix, the Remix
// request handler, and the WebSocket upgrade of the live door. server/index.mjs only listens and drains; keeping the rest
// here lets the tests serve exactly this on a port of their own (tests/integration/server-*.test.ts).
import { randomUUID } from "node:crypto";
import fs from "node:fs";

import compression from "compression";
import express from "express";
import morgan from "morgan";
import { logEntry, withLogContext } from "./log.mjs";
import { createRequestHandler } from "./remix-adapter.mjs";

/** A request id a trusted proxy may hand over: what nginx's $request_id, a UUID or a trace id look like. */
const REQUEST_ID = /^[\w.:-]{8,128}$/;

/**
 * `build`: the Remix server build (its entry module exports serverOptions, refuseBeforeRouting, handleLiveUpgrade).
 * Returns the Express app and the handler for the HTTP server's `upgrade` event.
 * @param {{ build: unknown; mode?: string; instanceName?: string; publicDir?: string }} options
 */
export function createServerApp({ build, mode = process.env.NODE_ENV, instanceName, publicDir = "public" }) {
  const entry = build.entry.module;
  const { trustProxy, clientAddressHeader, securityHeaders } = entry.serverOptions();
  const addressHeader = clientAddressHeader.toLowerCase();
  const app = express();
  app.disable("x-powered-by");
  // Express believes X-Forwarded-For (and -Proto, -Host) only from the proxies TRUST_PROXY names (ASVS 4.1.3):
  // without it req.ip is the socket's address, whatever a client writes into those headers.
  app.set("trust proxy", trustProxy);

  // The app reads the client's address from this one header (audit/audit.server.ts clientAddress), so it is always
  // replaced with what Express derived: a client that sends it itself is not believed.
  const handOver = (req, address) => {
    delete req.headers[addressHeader];
    if (address) req.headers[addressHeader] = address;
  };
  app.use((req, _res, next) => {
    handOver(req, req.ip);
    next();
  });

  // Every request has an id (ASVS 16.2.1): the one the balancer in front gave it when the socket's peer is a proxy
  // TRUST_PROXY names, else a new one — a client cannot choose it. The audit rows the request writes carry it
  // (audit/audit.server.ts), the answer names it (X-Request-Id) and so does every log line written while it is answered
  // (server/log.mjs): a log line leads to the audit row, and the row to the user.
  const fromTrustedProxy = (req) => Boolean(app.get("trust proxy fn")(req.socket.remoteAddress, 0));
  const assignRequestId = (req) => {
    const given = req.headers["x-request-id"];
    const id = typeof given === "string" && REQUEST_ID.test(given) && fromTrustedProxy(req) ? given : randomUUID();
    req.headers["x-request-id"] = id;
    return id;
  };
  app.use((req, res, next) => {
    const id = assignRequestId(req);
    res.setHeader("X-Request-Id", id);
    withLogContext({ request_id: id }, next);
  });

  // Every answer carries the app's security headers (ASVS 3.4): pages and API answers set theirs in the app and keep
  // them; static files, which never reach Remix, and resource routes that set none get them as they are written.
  app.use((_req, res, next) => {
    const writeHead = res.writeHead;
    res.writeHead = function (...args) {
      for (const [name, value] of securityHeaders) if (!this.hasHeader(name)) this.setHeader(name, value);
      return writeHead.apply(this, args);
    };
    next();
  });

  // Behind a load balancer, which app instance answered (scripts/scale-out.mjs, README "Production topology"):
  // only when the operator names the instance, so a default deployment says nothing about its processes.
  if (instanceName) {
    app.use((_req, res, next) => {
      res.setHeader("X-Skribent-Instance", instanceName);
      next();
    });
  }
  // Server-sent events must reach the browser as they are written: never buffer them for compression.
  // Level 3, not zlib's default 6: measured on the workspace page of 50 rows (209 KiB) and the JSON list of 1,000
  // recordings (827 KiB), it costs a third to half the CPU for 5–7 % more bytes (12.2 against 11.4 KiB; 87.6 against
  // 83.5 KiB) — under load the CPU is what every clinician waits for (README "Performance").
  app.use(
    compression({
      level: 3,
      filter: (req, res) =>
        !String(res.getHeader("Content-Type") ?? "").startsWith("text/event-stream") && compression.filter(req, res),
    }),
  );
  app.use(build.publicPath, express.static(build.assetsBuildDirectory, { immutable: true, maxAge: "1y" }));
  // The live client (public/live) must match the server it talks to: after a deploy a cached copy would speak to
  // the new server for up to an hour, so the browser asks again each time (a 304 when nothing changed).
  const noCache = (res) => res.setHeader("Cache-Control", "no-cache");
  app.use("/live", express.static(`${publicDir}/live`, { cacheControl: false, setHeaders: noCache }));
  // The rest of public/ (favicon, locales, the no-JavaScript helpers): only a request whose first segment names one of
  // its entries looks there — every page and API call went through serve-static's file lookup (a stat that fails).
  const publicEntries = new Set(fs.existsSync(publicDir) ? fs.readdirSync(publicDir) : []);
  const publicFiles = express.static(publicDir, { maxAge: "1h" });
  app.use((req, res, next) => (publicEntries.has(req.path.split("/")[1]) ? publicFiles(req, res, next) : next()));
  // One line per request, as remix-serve wrote ("tiny") — except the live door's audio and event streams, a few a
  // second — but without the query string: a signed storage URL's signature (sig=, X-Amz-Signature=), a sign-in's
  // authorization code and a search's terms are all in it, and none of them belongs in a log (issue 9).
  // Written as an entry with fields of its own (server/log.mjs), the text as before; morgan only times the answer
  // and writes nothing itself (a format that returns nothing).
  const requestLine = (tokens, req, res) => {
    const fields = {
      method: req.method,
      path: (req.originalUrl ?? req.url).split("?")[0],
      status: res.headersSent ? res.statusCode : undefined,
      bytes: Number(tokens.res(req, res, "content-length")) || undefined,
      ms: Number(tokens["response-time"](req, res)) || undefined,
      request_id: req.headers["x-request-id"],
    };
    const text = `${fields.method} ${fields.path} ${fields.status ?? "-"} ${fields.bytes ?? "-"} - ${fields.ms ?? "-"} ms`;
    logEntry("info", text, fields);
    return undefined;
  };
  app.use(morgan(requestLine, { skip: (req) => /^\/live\/sessions\/[^/]+\/(audio|events)/.test(req.path) }));
  // Methods the app answers; anything else (TRACE, CONNECT, made-up verbs) gets 405 here instead of failing inside
  // the request adapter with a 500 (TRACE is a forbidden method for the Fetch API's Request).
  const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
  app.use((req, res, next) => {
    if (METHODS.has(req.method)) return next();
    res.status(405).set({ Allow: [...METHODS].join(", "), "Content-Type": "text/plain; charset=utf-8" });
    res.end("Method not allowed");
  });
  // A state-changing request from another site, or a URL with a NUL, is refused before Remix routes it
  // (entry.server.tsx). Only the headers the check and its audit row read are handed over, and never the body: the
  // Referer for browsers that send neither Origin nor Fetch-Metadata, the cookies to tell whether the session rides
  // along (such a write with none of the three is refused).
  const checkedHeaders = [
    "origin",
    "sec-fetch-site",
    "referer",
    "cookie",
    "authorization",
    addressHeader,
    "x-request-id",
    "user-agent",
  ];
  app.use((req, res, next) => {
    const headers = new Headers();
    for (const name of checkedHeaders) if (req.get(name) !== undefined) headers.set(name, req.get(name));
    const probe = new Request(`http://localhost${req.originalUrl}`, { method: req.method, headers });
    entry.refuseBeforeRouting(probe).then(async (refusal) => {
      if (!refusal) return next();
      res.status(refusal.status);
      refusal.headers.forEach((value, name) => res.setHeader(name, value));
      res.end(await refusal.text());
    }, next);
  });
  app.all("*", createRequestHandler({ build, mode }));

  // An upgrade never passes through Express, so Express's own req.ip is asked for on a view of the raw request:
  // the same trust setting, the same walk through X-Forwarded-For.
  const addressOf = (req) =>
    Object.create(app.request, {
      headers: { value: req.headers },
      socket: { value: req.socket },
      connection: { value: req.socket },
    }).ip;
  function upgrade(req, socket, head) {
    handOver(req, addressOf(req));
    const id = assignRequestId(req);
    return withLogContext({ request_id: id }, () => entry.handleLiveUpgrade(req, socket, head));
  }

  return { app, upgrade };
}
