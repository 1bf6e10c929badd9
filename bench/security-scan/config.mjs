// The command line (see bench/security-scan.mjs for the options), the app's address and the accounts the tools
// sign in as.
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";

export const { values: opts } = parseArgs({
  options: {
    tools: { type: "string", default: "sqlmap,wapiti" },
    level: { type: "string", default: "2" },
    risk: { type: "string", default: "1" },
    only: { type: "string" },
    "wapiti-scan-time": { type: "string", default: "300" },
    "wapiti-attack-time": { type: "string", default: "45" },
    "report-dir": { type: "string" },
    "dry-run": { type: "boolean", default: false },
  },
});
export const TOOLS = new Set(opts.tools.split(",").filter(Boolean));
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const PORT = Number(process.env.BENCH_PORT ?? 3700);
export const APP = `http://localhost:${PORT}`;
/** The demo accounts the tools sign in as (the development provider's, app/services/dev-oidc/accounts.ts). */
export const ACCOUNTS = { sqlmapApi: "sara-yilmaz", sqlmapScreens: "tim-schroeder", wapiti: "lena-wagner" };
export const run = promisify(execFile);
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
