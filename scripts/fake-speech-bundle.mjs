// Bundles the tests' protocol-faithful servers (tests/support/*.ts) into a directory with esbuild and imports
// them, for scripts and benches that run under plain Node.
import { build } from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Bundles `tests/support/<name>.ts` into `dir` and returns the module's exports. */
export async function loadTestSupport(name, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, `${name}.mjs`);
  await build({
    entryPoints: [path.join(ROOT, `tests/support/${name}.ts`)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  // Bare imports (undici, ws) resolve from this repository's node_modules.
  const modules = path.join(dir, "node_modules");
  if (!fs.existsSync(modules)) fs.symlinkSync(path.join(ROOT, "node_modules"), modules, "dir");
  return import(pathToFileURL(outfile).href);
}

/** The batch fake's exports (startFakeSpeechmatics, TWO_SPEAKER_FIXTURE, …). */
export const loadFakeSpeechmatics = (dir) => loadTestSupport("fake-speechmatics", dir);

/** The realtime fake's exports (startFakeSpeechmaticsRt, …). */
export const loadFakeSpeechmaticsRt = (dir) => loadTestSupport("fake-speechmatics-rt", dir);
