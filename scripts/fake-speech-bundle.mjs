// Bundles the tests' protocol-faithful servers (tests/support/*.ts) into a directory with esbuild and imports
// them, for scripts and benches that run under plain Node.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundleForNode } from "./bundle-source.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Bundles `tests/support/<name>.ts` into `dir` and returns the module's exports. */
export async function loadTestSupport(name, dir) {
  const outfile = await bundleForNode(path.join(ROOT, `tests/support/${name}.ts`), path.join(dir, `${name}.mjs`));
  return import(pathToFileURL(outfile).href);
}

/** The batch fake's exports (startFakeSpeechmatics, TWO_SPEAKER_FIXTURE, …). */
export const loadFakeSpeechmatics = (dir) => loadTestSupport("fake-speechmatics", dir);

/** The realtime fake's exports (startFakeSpeechmaticsRt, …). */
export const loadFakeSpeechmaticsRt = (dir) => loadTestSupport("fake-speechmatics-rt", dir);
