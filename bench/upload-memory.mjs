#!/usr/bin/env node
// Uploads a 70 MB WAV through the built app (embedded defaults) and prints the
// server's peak memory growth — through the single upload URL, through the
// resumable upload in 5 MiB parts (what the browser uses above 8 MiB), each
// followed by update-file-metadata (which copies the object to disk and probes
// it), and through the no-JavaScript form (multipart streamed to disk).
// Goal: ≤ 20 MiB.
// Usage: npm run build && node bench/upload-memory.mjs
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { signIn, uploadInParts, wavHeader, writeSilentWav } from "./support.mjs";

const PORT = Number(process.env.BENCH_PORT ?? 3400);
const APP = `http://localhost:${PORT}`;
const BYTES = 73_400_000;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-"));

function makeWav(file) {
  writeSilentWav(file, BYTES);
}

function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

async function measure(pid, work) {
  const before = rssKiB(pid);
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssKiB(pid))), 20);
  const started = performance.now();
  await work();
  clearInterval(timer);
  peak = Math.max(peak, rssKiB(pid));
  return { before, peak, seconds: (performance.now() - started) / 1000 };
}

async function main() {
  const wav = path.join(dataDir, "big.wav");
  makeWav(wav);
  const server = spawn(process.execPath, ["server/index.mjs"], {
    env: {
      ...process.env,
      PORT: String(PORT),
      DEV_OIDC_PORT: String(PORT + 1),
      APP_URL: APP,
      DATA_DIR: path.join(dataDir, "app"),
      APP_ENV: "test",
      RATE_LIMIT_SIGNIN_PER_MINUTE: "1000",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    for (let i = 0; i < 200; i++) {
      const ok = await fetch(`${APP}/resources/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const cookie = await signIn(APP, "anna-berger");
    const json = (p, body) =>
      fetch(`${APP}${p}`, {
        method: "POST",
        headers: { cookie, origin: APP, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    const rows = [];

    // Warm-up with a one-second file, so the first row does not pay for loading the routes and the probe.
    const small = Buffer.concat([wavHeader(32_000), Buffer.alloc(32_000)]);
    const warm = await json("/api/get-upload-url", {
      file_name: "warm.wav",
      file_type: "audio/wav",
      language_code: "de",
    });
    await fetch(warm.url, { method: "PUT", headers: { "content-type": "audio/wav" }, body: small });
    await json("/api/update-file-metadata", { s3_key: warm.key, metadata: {} });

    rows.push([
      "upload URL + server check",
      await measure(server.pid, async () => {
        const slot = await json("/api/get-upload-url", {
          file_name: "big.wav",
          file_type: "audio/wav",
          language_code: "de",
        });
        const put = await fetch(slot.url, {
          method: "PUT",
          headers: { "content-type": "audio/wav" },
          body: fs.createReadStream(wav),
          duplex: "half",
        });
        if (!put.ok) throw new Error(`PUT ${put.status}`);
        const done = await json("/api/update-file-metadata", { s3_key: slot.key, metadata: {} });
        if (!done.success) throw new Error(JSON.stringify(done));
      }),
    ]);

    rows.push([
      "upload in parts + server check",
      await measure(server.pid, async () => {
        await uploadInParts(json, wav, { bytes: BYTES, fileName: "big.wav" });
      }),
    ]);

    rows.push([
      "form upload (no JavaScript)",
      await measure(server.pid, async () => {
        const form = new FormData();
        form.set("audio", new Blob([fs.readFileSync(wav)], { type: "audio/wav" }), "big.wav");
        form.set("language", "de-DE");
        form.set("mode", "transcript");
        const response = await fetch(`${APP}/?index`, {
          method: "POST",
          headers: { cookie, origin: APP },
          body: form,
          redirect: "manual",
        });
        if (response.status !== 302) throw new Error(`form upload answered ${response.status}`);
      }),
    ]);

    console.log(`\nUpload of ${(BYTES / 1048576).toFixed(1)} MiB through the app (server RSS, KiB):`);
    for (const [name, r] of rows)
      console.log(
        `  ${name.padEnd(30)} before ${r.before}  peak ${r.peak}  growth ${((r.peak - r.before) / 1024).toFixed(1)} MiB  in ${r.seconds.toFixed(1)} s`,
      );
    console.log("  goal: growth ≤ 20 MiB");
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
