#!/usr/bin/env node
// `npm run models`: fetches the local engines' model files ahead of time (the app itself fetches them in the
// background on first start; issue 21, ADR 0027). The code is the app's own (app/services/model-store/cli.server.ts),
// bundled here first so that the pins, checks and addresses are the same ones the app uses.
//   npm run models -- --help
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const outfile = path.resolve("build/models-cli.js");
await build({
  entryPoints: ["app/services/model-store/cli.server.ts"],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  tsconfig: "tsconfig.json",
  logLevel: "warning",
});
const { main } = await import(pathToFileURL(outfile).href);
process.exitCode = await main();
