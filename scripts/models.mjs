#!/usr/bin/env node
// `npm run models`: fetches the local engines' model files ahead of time (the app itself fetches them in the
// background on first start; issue 21, ADR 0027). The code is the app's own (app/services/model-store/cli.server.ts),
// bundled here first so that the pins, checks and addresses are the same ones the app uses.
//   npm run models -- --help
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundleForNode } from "./bundle-source.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = await bundleForNode(
  path.join(ROOT, "app/services/model-store/cli.server.ts"),
  path.join(ROOT, "build/models-cli/models-cli.js"),
);
const { main } = await import(pathToFileURL(outfile).href);
process.exitCode = await main();
