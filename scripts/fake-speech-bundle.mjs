// Bundles the tests' protocol-faithful Speechmatics server (tests/support/fake-speechmatics.ts) into `dir`
// with esbuild and imports it, for scripts and benches that run under plain Node.
import { build } from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The module's exports (startFakeSpeechmatics, TWO_SPEAKER_FIXTURE, …). */
export async function loadFakeSpeechmatics(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, "fake-speechmatics.mjs");
  await build({
    entryPoints: [path.join(ROOT, "tests/support/fake-speechmatics.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  // Bare imports (undici) resolve from this repository's node_modules.
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return import(pathToFileURL(outfile).href);
}
