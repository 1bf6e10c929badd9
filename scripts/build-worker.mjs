// Bundles the stand-alone worker (`npm run worker`) from app/worker.server.ts.
import { build } from "esbuild";

await build({
  entryPoints: ["app/worker.server.ts"],
  outfile: "build/worker.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  tsconfig: "tsconfig.json",
  logLevel: "warning",
});
