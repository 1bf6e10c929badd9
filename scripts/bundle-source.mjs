// Bundles TypeScript source (app/, tests/support/) with esbuild into one ES module that plain Node runs, as
// scripts/build-worker.mjs bundles the worker: `~/` imports resolved with tsconfig.json, packages left external.
// Shared by the fault suite's worker process, the scale-out proof and the scripts and benches that run the tests'
// fakes.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Bundles `entry` into `outfile` and links this repository's node_modules beside it, so that the bundle's bare
 * imports (undici, ws, pg, …) resolve. Returns `outfile`.
 * @param {string} entry
 * @param {string} outfile
 * @returns {Promise<string>}
 */
export async function bundleForNode(entry, outfile) {
  const dir = path.dirname(outfile);
  fs.mkdirSync(dir, { recursive: true });
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    tsconfig: path.join(ROOT, "tsconfig.json"),
    logLevel: "warning",
  });
  const modules = path.join(dir, "node_modules");
  if (!fs.existsSync(modules)) fs.symlinkSync(path.join(ROOT, "node_modules"), modules, "dir");
  return outfile;
}
