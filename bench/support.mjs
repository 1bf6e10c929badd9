// What the benches (and the scale-out proof) share: a silent 16 kHz mono PCM WAV of any size, signing in through
// the development provider with a tiny cookie jar (no browser), and the upload in parts the browser makes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export function wavHeader(dataBytes) {
  const h = Buffer.alloc(44);
  h.write("RIFF", 0);
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write("WAVEfmt ", 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(32000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36);
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

/** A WAV of exactly `bytes` bytes (header included) of digital silence, written 1 MiB at a time. */
export function writeSilentWav(file, bytes) {
  const fd = fs.openSync(file, "w");
  fs.writeSync(fd, wavHeader(bytes - 44));
  const chunk = Buffer.alloc(1 << 20);
  for (let left = bytes - 44; left > 0; left -= chunk.length) fs.writeSync(fd, chunk, 0, Math.min(left, chunk.length));
  fs.closeSync(fd);
}

/**
 * Follows the sign-in redirects of the app at `app` for a demo account; returns the app's Cookie header. Cookies are
 * kept per port (the app's and the provider's). `onHop(url, response, method)` sees each answer as it comes (the
 * scale-out proof notes which instance gave it).
 */
export async function signIn(app, accountId, { onHop } = {}) {
  const jar = new Map();
  const store = (url, response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, ...rest] = pair.split("=");
      jar.set(`${new URL(url).port}|${name}`, rest.join("="));
    }
  };
  const cookies = (url) =>
    [...jar]
      .filter(([k]) => k.startsWith(`${new URL(url).port}|`))
      .map(([k, v]) => `${k.split("|")[1]}=${v}`)
      .join("; ");
  let url = `${app}/auth/start?redirectTo=%2F`;
  let init = {};
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers ?? {}), cookie: cookies(url) },
    });
    store(url, response);
    onHop?.(url, response, init.method ?? "GET");
    init = {};
    const location = response.headers.get("location");
    if (location) {
      url = new URL(location, url).toString();
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*method="post"[^>]*action="([^"]+\/login)"/.exec(html)?.[1];
    if (action) {
      url = new URL(action.replace(/&amp;/g, "&"), url).toString();
      init = {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `accountId=${accountId}`,
      };
      continue;
    }
    if (new URL(url).pathname === "/auth/callback") return cookies(app);
    throw new Error(`sign-in stopped at ${url} (${response.status})`);
  }
  throw new Error("sign-in: too many redirects");
}

/** The environment of a bench's app: the built server on `port` (sign-in provider on port + 1), a fresh data dir. */
export function benchAppEnv({ port, dataDir, env }) {
  return {
    ...process.env,
    PORT: String(port),
    DEV_OIDC_PORT: String(port + 1),
    APP_URL: `http://localhost:${port}`,
    DATA_DIR: dataDir,
    APP_ENV: "test",
    RATE_LIMIT_SIGNIN_PER_MINUTE: "1000",
    ...env,
  };
}

/** Waits up to 2 minutes (a busy machine) for the app at `app` to answer its health check. */
export async function waitForApp(app) {
  for (let i = 0; i < 1200; i++) {
    const up = await fetch(`${app}/resources/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the app did not start within 2 minutes");
}

/**
 * One upload in parts, as the browser's upload script makes it: start, part URLs three at a time, a PUT per part
 * (the three at once with `together`, else one after another), complete, then update-file-metadata (which checks
 * the file). `post(path, body)` makes the JSON calls as the signed-in user. Returns the upload's key.
 */
export async function uploadInParts(post, file, { bytes, fileName, together = false, label = "upload" }) {
  const start = await post("/api/upload-parts/start", {
    file_name: fileName,
    file_type: "audio/wav",
    file_size: bytes,
    language_code: "de",
  });
  if (!start.key) throw new Error(`${label}: ${JSON.stringify(start)}`);
  const put = async (part) => {
    const from = (part.part_number - 1) * start.part_size;
    const to = Math.min(from + start.part_size, bytes) - 1;
    const response = await fetch(part.url, {
      method: "PUT",
      body: fs.createReadStream(file, { start: from, end: to }),
      headers: { "content-length": String(to - from + 1) },
      duplex: "half",
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${label} part ${part.part_number}: PUT ${response.status}`);
  };
  for (let first = 1; first <= start.part_count; first += 3) {
    const numbers = [first, first + 1, first + 2].filter((n) => n <= start.part_count);
    const { parts } = await post("/api/upload-parts/urls", { key: start.key, part_numbers: numbers });
    if (together) await Promise.all(parts.map(put));
    else for (const part of parts) await put(part);
  }
  const complete = await post("/api/upload-parts/complete", { key: start.key });
  if (!complete.success) throw new Error(`${label}: ${JSON.stringify(complete)}`);
  const checked = await post("/api/update-file-metadata", { s3_key: start.key, metadata: {} });
  if (!checked.success) throw new Error(`${label}: ${JSON.stringify(checked)}`);
  return start.key;
}

/** The app process's CPU time so far (user + system), in ms: /proc/<pid>/stat fields 14 and 15, in clock ticks. */
export function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

export function rssMiB(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;
}

const WRK_SCRIPT = `
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT %d %d %d %.0f %.0f %.0f %.0f\\n", summary.requests, errors, summary.errors.status,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max))
end
`;

/** wrk on `target` (a whole URL) with a Lua report: requests, errors, non-2xx and latencies in µs. */
export function wrk(workDir, target, cookie, { connections, seconds, threads }) {
  // A fresh machine has no wrk: say which package brings it rather than throw spawnSync's ENOENT.
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
  } catch (error) {
    if (error.code === "ENOENT") throw new Error("wrk is not installed: apt-get install -y wrk (Debian's package)");
  }
  const script = path.join(workDir, "report.lua");
  fs.writeFileSync(script, WRK_SCRIPT);
  const out = execFileSync(
    "wrk",
    [
      `-t${threads}`,
      `-c${connections}`,
      `-d${seconds}s`,
      "--timeout",
      "10s",
      "-s",
      script,
      "-H",
      `Cookie: ${cookie}`,
      "-H",
      "Accept-Encoding: gzip",
      target,
    ],
    { encoding: "utf8" },
  );
  const [requests, errors, non2xx, p50, p95, p99, max] = /RESULT (.*)/.exec(out)[1].split(" ").map(Number);
  return { requests, errors, non2xx, p50, p95, p99, max, rps: requests / seconds };
}
