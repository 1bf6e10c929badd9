#!/usr/bin/env node
// The floor under a page's load figures (bench/pages.mjs): the very bytes a route answered, served from memory by
// a bare Express with the app's compression middleware — no session, database, rendering, audit or CSP. What wrk
// measures here, no implementation of that route can beat on this machine.
//   node bench/floor-server.mjs <body file> <content type> <port>
import fs from "node:fs";
import compression from "compression";
import express from "express";

const [file, type, port] = process.argv.slice(2);
const body = fs.readFileSync(file);
const app = express();
app.disable("x-powered-by");
app.use(compression());
app.get("/", (_req, res) => res.type(type).send(body));
app.listen(Number(port), "127.0.0.1", () => console.log("ready"));
