// The scale-out proof's settings (scripts/scale-out.mjs has the usage): ports, addresses, the processes it runs
// and the timings of the fake engines that the stops are aimed at.
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BASE = Number(process.env.SCALE_OUT_PORT ?? 3860);
export const PORTS = { nginx: BASE, A: BASE + 1, B: BASE + 2, idp: BASE + 3, s3: BASE + 4, s3rver: BASE + 5 };
Object.assign(PORTS, { batch: BASE + 6, realtime: BASE + 7, llm: BASE + 8 });
export const APP = `http://localhost:${PORTS.nginx}`;
export const ISSUER = `http://localhost:${PORTS.idp}`;
export const PG = {
  host: process.env.PGHOST ?? "127.0.0.1",
  port: process.env.PGPORT ?? "5432",
  user: process.env.PGUSER ?? "postgres",
};
export const NGINX = process.env.NGINX ?? "/usr/sbin/nginx";
// The worker to run: the built one, or (to check a change to the worker before the next build) another bundle.
export const WORKER = process.env.SCALE_OUT_WORKER ?? path.join(ROOT, "build/worker.js");
// How the live recording's instance is stopped (SIGKILL: a crash, see README "Production topology").
export const LIVE_SIGNAL = process.env.SCALE_OUT_LIVE_SIGNAL ?? "SIGTERM";
export const WAV_BYTES = 12_000_000; // three parts of 5 MiB: the browser sends files over 8 MiB in parts
export const LETTER_MS = 4_000; // how long the fake model takes to write a letter (the kill lands inside it)
export const REFINE_MS = 2_500; // how long a refinement takes (SIGTERM lands inside it)
export const run = promisify(execFile);
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
