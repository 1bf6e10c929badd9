// Bundles and minifies the progressive-enhancement scripts (ADR 0006) from app/pe/ into public/pe/, where the pages
// load them from. Readable sources stay in app/pe/; the minified copies keep each page within the
// 5 KiB (gzip) budget that tests/e2e/js-budget.spec.ts measures. Each top-level app/pe/*.js is one page's
// script; one that has grown past a readable size keeps its pieces in a subfolder (app/pe/upload/) and imports them.
import { build } from "esbuild";
import fs from "node:fs";

const entryPoints = fs
  .readdirSync("app/pe", { withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith(".js"))
  .map((entry) => `app/pe/${entry.name}`);

fs.rmSync("public/pe", { recursive: true, force: true });
await build({
  entryPoints,
  outdir: "public/pe",
  minify: true,
  // The pages load each output as one classic script (no type="module", no further requests): its imports are
  // bundled in and the whole wrapped in a function, so nothing leaks into the page's globals.
  bundle: true,
  format: "iife",
  target: "es2019",
  logLevel: "warning",
});
