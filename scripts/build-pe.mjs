// Minifies the progressive-enhancement scripts (ADR 0006) from app/pe/ into public/pe/, where the pages
// load them from. Readable sources stay in app/pe/; the minified copies keep each page within the
// 5 KiB (gzip) budget that tests/e2e/js-budget.spec.ts measures.
import { build } from "esbuild";
import fs from "node:fs";

const entryPoints = fs
  .readdirSync("app/pe")
  .filter((name) => name.endsWith(".js"))
  .map((name) => `app/pe/${name}`);

fs.rmSync("public/pe", { recursive: true, force: true });
await build({
  entryPoints,
  outdir: "public/pe",
  minify: true,
  // Each file is a self-contained classic script; no bundling, no module syntax.
  bundle: false,
  target: "es2019",
  logLevel: "warning",
});
