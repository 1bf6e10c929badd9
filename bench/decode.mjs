#!/usr/bin/env node
// Upload conversion in process (app/services/media/decode.server.ts: WAV in JavaScript, MP3 by mpg123 in
// WebAssembly, a windowed-sinc resampler in JavaScript) against the ffmpeg CLI doing the same on this machine:
// decode + mix down + resample to 16 kHz mono 16-bit WAV on disk. Prints the time per minute of audio and the
// peak RSS growth. The in-process side is bundled from the TypeScript source with esbuild and runs in a fresh
// child process per run, so its peak RSS is its own; ffmpeg's is measured by /usr/bin/time.
// A bench prints figures; it is not a test (exit 1 only when a measurement fails).
//
// The fixtures (made with ffmpeg, a bench-only tool here): 10 minutes of a tone and noise mix as a 44.1 kHz
// stereo 128 kbit/s MP3 and a 44.1 kHz mono 16-bit WAV (53 MB, under the 70 MB upload cap).
//
// Usage: npm run bench:decode
//        node bench/decode.mjs --minutes 10 --runs 3
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const run = promisify(execFile);

const { values: opts } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    runs: { type: "string", default: "3" },
  },
});
const MINUTES = Number(opts.minutes);
const RUNS = Number(opts.runs);

// The child: one conversion, then its timing and memory as one JSON line.
const CHILD = `
import { decodeToSpeechWav } from "./media-decode.mjs";
const [input, output, format] = process.argv.slice(2);
globalThis.gc?.();
const before = process.memoryUsage().rss;
const started = performance.now();
const result = await decodeToSpeechWav({ input, output, format, maxSamples: Number.MAX_SAFE_INTEGER });
const ms = performance.now() - started;
console.log(JSON.stringify({ ms, samples: result.samples, rssBefore: before, peakRss: process.resourceUsage().maxRSS * 1024 }));
`;

async function bundle(dir) {
  const { build } = await import("esbuild");
  await build({
    entryPoints: [path.join(ROOT, "app/services/media/decode.server.ts")],
    outfile: path.join(dir, "media-decode.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "error",
  });
  // The bundle imports mpg123-decoder by name: resolve it from the repository's node_modules.
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  fs.writeFileSync(path.join(dir, "child.mjs"), CHILD);
}

async function makeFixtures(dir) {
  const seconds = MINUTES * 60;
  const source = [
    "-f",
    "lavfi",
    "-i",
    `sine=frequency=220:duration=${seconds}:sample_rate=44100`,
    "-f",
    "lavfi",
    "-i",
    `anoisesrc=color=pink:amplitude=0.1:duration=${seconds}:sample_rate=44100`,
    "-filter_complex",
    "amix=inputs=2",
  ];
  const mp3 = path.join(dir, "ten-minutes.mp3");
  const wav = path.join(dir, "ten-minutes.wav");
  const quiet = ["-hide_banner", "-nostdin", "-loglevel", "error", "-y"];
  await run("ffmpeg", [...quiet, ...source, "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", mp3]);
  await run("ffmpeg", [...quiet, ...source, "-ac", "1", "-c:a", "pcm_s16le", wav]);
  return { mp3, wav };
}

function inProcess(dir, input, format) {
  return new Promise((resolve, reject) => {
    const output = path.join(dir, `out-${format}.wav`);
    const child = spawn(process.execPath, ["--expose-gc", path.join(dir, "child.mjs"), input, output, format], {
      cwd: dir,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`in-process conversion exited with ${code}`));
      const r = JSON.parse(out.trim().split("\n").at(-1));
      resolve({ ms: r.ms, rssGrowth: r.peakRss - r.rssBefore, peakRss: r.peakRss, seconds: r.samples / 16_000 });
    });
  });
}

async function viaFfmpeg(dir, input) {
  const output = path.join(dir, "out-ffmpeg.wav");
  const started = performance.now();
  const { stderr } = await run("/usr/bin/time", [
    "-f",
    "%M",
    "ffmpeg",
    ...["-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i", input],
    ...["-vn", "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le", "-f", "wav", output],
  ]);
  const ms = performance.now() - started;
  const peakKb = Number(stderr.trim().split("\n").at(-1));
  return { ms, peakRss: peakKb * 1024 };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-decode-"));
  try {
    await bundle(dir);
    const fixtures = await makeFixtures(dir);
    console.log(`decode + resample to 16 kHz mono WAV, ${MINUTES} min of audio, median of ${RUNS} runs`);
    console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}`);
    for (const [format, file] of Object.entries(fixtures)) {
      const label = format === "mp3" ? "MP3 44.1 kHz stereo 128k" : "WAV 44.1 kHz mono 16-bit";
      const ours = [];
      const theirs = [];
      for (let i = 0; i < RUNS; i++) {
        ours.push(await inProcess(dir, file, format));
        theirs.push(await viaFfmpeg(dir, file));
      }
      const oursMs = median(ours.map((r) => r.ms));
      const theirsMs = median(theirs.map((r) => r.ms));
      const size = fs.statSync(file).size;
      console.log(`\n${label} (${mb(size)}), decoded ${ours[0].seconds.toFixed(1)} s`);
      console.log(
        `  in process (WASM/JS): ${(oursMs / MINUTES).toFixed(0)} ms per audio minute, ` +
          `peak RSS growth ${mb(median(ours.map((r) => r.rssGrowth)))} (peak ${mb(median(ours.map((r) => r.peakRss)))})`,
      );
      console.log(
        `  ffmpeg CLI:           ${(theirsMs / MINUTES).toFixed(0)} ms per audio minute (process start included), ` +
          `peak RSS ${mb(median(theirs.map((r) => r.peakRss)))}`,
      );
      console.log(`  ratio: ${(oursMs / theirsMs).toFixed(1)} × ffmpeg's time`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
