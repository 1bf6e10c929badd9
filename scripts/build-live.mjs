// Bundles the live client (issue 7, ADR 0013) into public/live/: recorder.js (the recording widget on the
// Audio page) and dictation.js (the voice button of the letter editor), each one classic script that a
// nonce'd loader in app/pe/ injects on demand, and the AudioWorklet module, which runs as it is written.
// Prints each file's size, raw and gzip.
import { build } from "esbuild";
import fs from "node:fs";
import { gzipSync } from "node:zlib";

const out = "public/live";
fs.rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: { recorder: "app/live/client/recorder.ts", dictation: "app/live/client/dictation.ts" },
  outdir: out,
  bundle: true,
  format: "iife",
  target: "es2019",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
// The worklet is an ES module (AudioWorklet.addModule); its exports are only for the unit tests.
await build({
  entryPoints: { "capture-worklet": "app/live/client/capture-worklet.js" },
  outdir: out,
  bundle: false,
  format: "esm",
  target: "es2019",
  minify: true,
  logLevel: "warning",
});
for (const name of fs.readdirSync(out).sort()) {
  const bytes = fs.readFileSync(`${out}/${name}`);
  console.log(`${out}/${name}: ${bytes.length} B, ${gzipSync(bytes).length} B gzip`);
}
