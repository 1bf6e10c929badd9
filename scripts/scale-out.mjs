#!/usr/bin/env node
// The scale-out proof (README "Production topology"): two app instances (A and B, WORKER_IN_PROCESS=false) and
// one stand-alone job worker behind nginx (Debian's package, run unprivileged on loopback, round-robin), sharing
// one PostgreSQL database and one S3-compatible store (s3rver behind tests/support/s3rver.ts), with a
// stand-alone OpenID provider (the development provider, app/services/dev-oidc, in this process) and the tests'
// protocol-faithful engines (Speechmatics batch and realtime, an OpenAI-compatible chat API with the letter
// behaviour of tests/support/fake-llm-letters.ts). One user's whole workflow goes through nginx, as the JSON API
// and the live door's clients make the calls: sign-in, an upload in parts, the transcript (made by the worker),
// the letter (worker), a refinement saved as a version, and a live recording over the WebSocket door, saved.
// nginx reaches the instances over TLS, as the shipped configuration does (ADR 0022): each serves HTTPS with a
// certificate from an internal CA made for the run (scripts/internal-ca.mjs), which nginx verifies.
// Meanwhile instances are stopped four times: A by SIGTERM in the middle of the upload and by SIGKILL while the
// letter is being written, the instance answering a refinement by SIGTERM while the request is in flight on it,
// and the instance holding the live recording's socket by SIGTERM mid-recording. Each is started again after.
//
// Exit 0 = proven: both instances answered parts of the workflow, nothing was lost (every request a client made
// was answered — a live socket may drop and is reconnected, as the recorder does), each recording has exactly
// one transcript and one letter, each engine job ran once. Otherwise exit 1 with what failed.
//
// Usage: npm run scale-out   (needs a built app: npm run build; PostgreSQL on 127.0.0.1:5432, user postgres
//        without password — or PGHOST/PGPORT/PGUSER; nginx at /usr/sbin/nginx — or NGINX)
// Env:   SCALE_OUT_PORT (3860): nginx; +1 A, +2 B, +3 identity provider, +4/+5 S3, +6/+7/+8 engines.
//        SCALE_OUT_WORKER: the worker bundle to run (build/worker.js).
//        SCALE_OUT_LIVE_SIGNAL: how the live recording's instance is stopped (SIGTERM).
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import WebSocket from "ws";
import { signIn as followSignIn, writeSilentWav } from "../bench/support.mjs";
import { bundleForNode } from "./bundle-source.mjs";
import { INSTANCE_HOST, makeInternalCa } from "./internal-ca.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BASE = Number(process.env.SCALE_OUT_PORT ?? 3860);
const PORTS = { nginx: BASE, A: BASE + 1, B: BASE + 2, idp: BASE + 3, s3: BASE + 4, s3rver: BASE + 5 };
Object.assign(PORTS, { batch: BASE + 6, realtime: BASE + 7, llm: BASE + 8 });
const APP = `http://localhost:${PORTS.nginx}`;
const ISSUER = `http://localhost:${PORTS.idp}`;
const PG = {
  host: process.env.PGHOST ?? "127.0.0.1",
  port: process.env.PGPORT ?? "5432",
  user: process.env.PGUSER ?? "postgres",
};
const NGINX = process.env.NGINX ?? "/usr/sbin/nginx";
// The worker to run: the built one, or (to check a change to the worker before the next build) another bundle.
const WORKER = process.env.SCALE_OUT_WORKER ?? path.join(ROOT, "build/worker.js");
// How the live recording's instance is stopped (SIGKILL: a crash, see README "Production topology").
const LIVE_SIGNAL = process.env.SCALE_OUT_LIVE_SIGNAL ?? "SIGTERM";
const WAV_BYTES = 12_000_000; // three parts of 5 MiB: the browser sends files over 8 MiB in parts
const LETTER_MS = 4_000; // how long the fake model takes to write a letter (the kill lands inside it)
const REFINE_MS = 2_500; // how long a refinement takes (SIGTERM lands inside it)
const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const started = Date.now();
const clock = () => `+${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s`;

class ProofError extends Error {}
function check(condition, message) {
  if (!condition) throw new ProofError(message);
}

// ---------------------------------------------------------------------------------------------------------
// What happened: every step with its time, every request with the instance that answered it.

const steps = [];
const caveats = [];
let current;
function step(name) {
  current = { name, at: Date.now(), served: { A: 0, B: 0 }, requests: 0 };
  steps.push(current);
  console.log(`\n${clock()}  ${steps.length}. ${name}`);
}
function note(text) {
  console.log(`${clock()}     ${text}`);
}
function endStep() {
  current.ms = Date.now() - current.at;
}

// ---------------------------------------------------------------------------------------------------------
// Processes: every child is stopped at the end, by its own pid, also on failure.

const children = new Map(); // name → { child, log, exited }
const cleanups = [];
let tmp;

function startProcess(name, command, args, env) {
  const log = path.join(tmp, `${name}.log`);
  const out = fs.openSync(log, "a");
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", out, out] });
  fs.closeSync(out);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const entry = { child, log, exited, pid: child.pid };
  children.set(name, entry);
  exited.then(() => {
    if (children.get(name) === entry) children.delete(name);
  });
  return entry;
}

const stops = []; // what the workflow went through, for the last line
async function stopProcess(name, signal = "SIGTERM", graceMs = 20_000, why = "") {
  const entry = children.get(name);
  if (!entry) return undefined;
  if (why) stops.push(`${name} ${signal} ${why}`);
  const t0 = Date.now();
  entry.child.kill(signal);
  const timer = setTimeout(() => entry.child.kill("SIGKILL"), graceMs);
  const result = await entry.exited;
  clearTimeout(timer);
  return { ...result, ms: Date.now() - t0 };
}

function tail(file, lines = 15) {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

async function waitFor(what, probe, { timeoutMs = 30_000, everyMs = 100 } = {}) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    if (Date.now() > until) throw new ProofError(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The shared configuration of every Skribent process: what must be the same on each of them.

function sharedEnv({ database, cookieSecret, clientSecret, s3, fakes }) {
  const env = { ...process.env };
  // This machine's own settings must not leak into the proof (a developer's .env, another DATA_DIR, …).
  for (const key of Object.keys(env))
    if (/^(S3_|OIDC_|SPEECH|LLM_|LOCAL_|DEV_OIDC|RATE_LIMIT)/.test(key)) delete env[key];
  return {
    ...env,
    NODE_ENV: "production",
    APP_ENV: "production",
    APP_URL: APP,
    DATABASE_URL: `postgres://${PG.user}@${PG.host}:${PG.port}/${database}`,
    COOKIE_SECRET: cookieSecret,
    OIDC_ISSUER: ISSUER,
    OIDC_CLIENT_ID: "skribent",
    OIDC_CLIENT_SECRET: clientSecret,
    STORAGE_DRIVER: "s3",
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_PUBLIC_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: "S3RVER",
    S3_SECRET_ACCESS_KEY: "S3RVER",
    SPEECH_ENGINE: "speechmatics",
    SPEECHMATICS_API_KEY: "test-key",
    SPEECHMATICS_BATCH_URL: fakes.batch.url,
    SPEECH_LIVE_ENGINE: "speechmatics",
    SPEECHMATICS_RT_URL: fakes.realtime.url,
    SPEECHMATICS_MP_URL: fakes.realtime.managementUrl,
    LLM_ENGINE: "openai",
    LLM_OPENAI_URL: fakes.llm.url,
    LLM_OPENAI_API_KEY: "test-key",
    WORKER_IN_PROCESS: "false",
    // nginx (on this machine) replaces X-Forwarded-For with its client's address: the instances believe it from
    // loopback only, so a client that reached an instance past nginx could not name its own address.
    TRUST_PROXY: "loopback",
  };
}

let baseEnv;
const pids = new Map(); // pid → instance name, for the live runner's row
// The internal CA nginx trusts, and the one certificate (for INSTANCE_HOST) both instances serve.
let internalCa;
let instanceTls;

/** The instance's health check, straight to it over HTTPS: trusting only the internal CA, checking the name. */
function instanceHealthy(port) {
  return new Promise((resolve) => {
    const options = { host: "127.0.0.1", port, servername: INSTANCE_HOST, ca: fs.readFileSync(internalCa.caFile) };
    https
      .get({ ...options, path: "/resources/healthz" }, (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      })
      .once("error", () => resolve(false));
  });
}

async function startInstance(name) {
  const t0 = Date.now();
  const entry = startProcess(name, process.execPath, ["server.mjs"], {
    ...baseEnv,
    PORT: String(PORTS[name]),
    HOST: "127.0.0.1",
    INSTANCE_NAME: name,
    DATA_DIR: path.join(tmp, `data-${name}`),
    TLS_CERT_FILE: instanceTls.certFile,
    TLS_KEY_FILE: instanceTls.keyFile,
  });
  pids.set(entry.pid, name);
  await Promise.race([
    waitFor(`instance ${name} up`, () => instanceHealthy(PORTS[name])),
    entry.exited.then(({ code }) => {
      throw new ProofError(`instance ${name} exited with ${code} while starting:\n${tail(entry.log)}`);
    }),
  ]);
  note(`instance ${name} up on https :${PORTS[name]} (pid ${entry.pid}) in ${Date.now() - t0} ms`);
  return entry;
}

// ---------------------------------------------------------------------------------------------------------
// nginx: round-robin over A and B, with the locations the repository ships for production
// (deploy/nginx/skribent-locations.conf: WebSocket upgrade for the live door, 70 MB bodies streamed, forwarding
// headers — X-Forwarded-For overwritten, not appended to, which the instances' TRUST_PROXY=loopback takes as the
// client — and the request id — and TLS to the instances, verified against the internal CA and INSTANCE_HOST, which
// the server block names as skribent.conf does). Only the TLS server towards the clients (deploy/nginx/skribent.conf)
// is left out here; it has its own test (tests/integration/deploy-nginx.test.ts).

function nginxConfig(dir) {
  return `worker_processes 1;
events { worker_connections 512; }
http {
  log_format scale '$msec $request_method $uri $status $upstream_addr $upstream_status $request_time';
  access_log ${dir}/access.log scale;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $skribent_connection_upgrade { default upgrade; '' close; }
  upstream skribent {
    server 127.0.0.1:${PORTS.A} max_fails=1 fail_timeout=2s;
    server 127.0.0.1:${PORTS.B} max_fails=1 fail_timeout=2s;
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${PORTS.nginx};
    proxy_ssl_trusted_certificate ${internalCa.caFile};
    proxy_ssl_name ${INSTANCE_HOST};
    include ${path.join(ROOT, "deploy/nginx/skribent-locations.conf")};
  }
}
`;
}

/** Which instance nginx handed each request whose path matches (from its access log). */
function nginxLog(match) {
  const lines = fs
    .readFileSync(path.join(tmp, "nginx", "access.log"), "utf8")
    .trim()
    .split("\n");
  return lines
    .map((line) => line.split(" "))
    .filter(([, , uri]) => match.test(uri))
    .map(([, method, uri, status, upstream]) => ({
      method,
      uri,
      status: Number(status),
      upstreams: upstream
        .split(", ")
        .map((u) => (u.endsWith(`:${PORTS.A}`) ? "A" : u.endsWith(`:${PORTS.B}`) ? "B" : u)),
    }));
}

// ---------------------------------------------------------------------------------------------------------
// The client: JSON calls through nginx with the session cookie, noting which instance answered.

let cookie = "";
async function call(method, url, { json, body, headers = {}, expect = [200] } = {}) {
  const t0 = Date.now();
  const target = url.startsWith("http") ? url : `${APP}${url}`;
  const response = await fetch(target, {
    method,
    redirect: "manual",
    headers: {
      cookie,
      origin: APP,
      ...(json !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: json !== undefined ? JSON.stringify(json) : body,
    ...(body && typeof body.pipe === "function" ? { duplex: "half" } : {}),
  });
  const instance = response.headers.get("x-skribent-instance");
  if (instance && current) {
    current.served[instance] = (current.served[instance] ?? 0) + 1;
    current.requests += 1;
  }
  const type = response.headers.get("content-type") ?? "";
  const data = type.includes("json") ? await response.json() : await response.text();
  const ms = Date.now() - t0;
  if (!expect.includes(response.status)) {
    throw new ProofError(
      `${method} ${new URL(target).pathname} answered ${response.status} from ${instance ?? "?"}: ${JSON.stringify(data).slice(0, 300)}`,
    );
  }
  return { status: response.status, data, instance, ms, response };
}
const say = (method, p, r) => note(`[${r.instance ?? "-"}] ${method} ${p} → ${r.status} (${r.ms} ms)`);

/** bench/support.mjs's sign-in, through nginx, noting who answered each app hop. */
async function signIn(accountId) {
  const hops = [];
  const cookies = await followSignIn(APP, accountId, {
    onHop(url, response, method) {
      const instance = response.headers.get("x-skribent-instance");
      const where = new URL(url);
      hops.push(`${where.port === String(PORTS.idp) ? "IdP" : `[${instance}]`} ${method} ${where.pathname}`);
      if (instance) {
        current.served[instance] += 1;
        current.requests += 1;
      }
      // 200: the page that refreshes to where the user was going, with the session cookie set.
      if (where.pathname === "/auth/callback")
        check(response.status === 200, `the callback answered ${response.status}`);
    },
  }).catch((error) => {
    throw /^sign-in/.test(error?.message) ? new ProofError(error.message) : error;
  });
  note(`hops: ${hops.join(" → ")}`);
  return cookies;
}

// ---------------------------------------------------------------------------------------------------------
// Live audio: stretches of a tone (the fake realtime engine hears each as one line of its script) and silence,
// as 16 kHz mono s16le in the recorder's 4096-sample buffers.

const STRETCHES = 8;
const SPEECH_S = 1.4;
const PAUSE_S = 0.9;
function liveBuffers(stretches) {
  const rate = 16_000;
  const parts = [];
  for (let s = 0; s < stretches; s++) {
    const tone = Buffer.alloc(Math.round(SPEECH_S * rate) * 2);
    for (let i = 0; i < tone.length / 2; i++)
      tone.writeInt16LE(Math.round(9000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
    parts.push(tone, Buffer.alloc(Math.round(PAUSE_S * rate) * 2));
  }
  const pcm = Buffer.concat(parts);
  const buffers = [];
  for (let at = 0; at < pcm.length; at += 8192) buffers.push(pcm.subarray(at, at + 8192));
  return buffers;
}

function openLiveSocket(sessionId) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${APP.replace("http", "ws")}/live/ws?session=${sessionId}`, {
      headers: { cookie, origin: APP },
    });
    const messages = [];
    const waiters = [];
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      messages.push(message);
      for (const waiter of [...waiters])
        if (waiter.match(message)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
    });
    const closed = new Promise((done) => socket.on("close", (code) => done(code)));
    socket.on("unexpected-response", (_req, res) => reject(new ProofError(`live socket: HTTP ${res.statusCode}`)));
    socket.on("error", reject);
    socket.on("open", () =>
      resolve({
        socket,
        messages,
        closed,
        next: (match, timeoutMs = 20_000) => {
          const seen = messages.find(match);
          if (seen) return Promise.resolve(seen);
          return new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new ProofError("live socket: no answer in time")), timeoutMs);
            waiters.push({
              match,
              resolve: (m) => {
                clearTimeout(timer);
                done(m);
              },
            });
            closed.then((code) => fail(new ProofError(`live socket closed (${code})`)));
          });
        },
      }),
    );
  });
}

// ---------------------------------------------------------------------------------------------------------

async function main() {
  for (const file of ["build/index.js", "build/worker.js"])
    if (!fs.existsSync(path.join(ROOT, file))) {
      console.error(`${file} is missing: the proof runs the built app. Run \`npm run build\` first.`);
      process.exit(2);
    }
  if (!fs.existsSync(NGINX)) {
    console.error(`nginx not found at ${NGINX} (apt-get install nginx-light, or set NGINX)`);
    process.exit(2);
  }
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-scale-out-"));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // ---------------------------------------------------------------------------------------------------
  step("start: PostgreSQL database, S3, engines, identity provider, instances A and B, worker, nginx");
  const database = `skribent_scale_${randomBytes(4).toString("hex")}`;
  const pgArgs = ["-h", PG.host, "-p", PG.port, "-U", PG.user];
  await run("createdb", [...pgArgs, database]);
  cleanups.push(() => run("dropdb", [...pgArgs, "--if-exists", "--force", database]));
  note(`database ${database} on ${PG.host}:${PG.port}`);

  const entry = path.join(tmp, "support.ts");
  fs.writeFileSync(
    entry,
    [
      `export { startS3rver } from ${JSON.stringify(path.join(ROOT, "tests/support/s3rver.ts"))};`,
      `export { startFakeSpeechmatics } from ${JSON.stringify(path.join(ROOT, "tests/support/fake-speechmatics.ts"))};`,
      `export { startFakeSpeechmaticsRt } from ${JSON.stringify(path.join(ROOT, "tests/support/fake-speechmatics-rt.ts"))};`,
      `export { startFakeOpenAiChatServer, reply } from ${JSON.stringify(path.join(ROOT, "tests/support/fake-openai-chat.ts"))};`,
      `export { letterModel } from ${JSON.stringify(path.join(ROOT, "tests/support/fake-llm-letters.ts"))};`,
      `export { startDevOidcProvider } from ${JSON.stringify(path.join(ROOT, "app/services/dev-oidc/provider.server.ts"))};`,
    ].join("\n"),
  );
  const lib = await import(await bundleForNode(entry, path.join(tmp, "support", "support.mjs")));

  const s3 = await lib.startS3rver("skribent-scale", { port: PORTS.s3, s3rverPort: PORTS.s3rver });
  cleanups.push(() => s3.close());
  const batch = await lib.startFakeSpeechmatics({ port: PORTS.batch, host: "127.0.0.1" });
  cleanups.push(() => batch.close());
  const realtime = await lib.startFakeSpeechmaticsRt({ port: PORTS.realtime, host: "127.0.0.1" });
  cleanups.push(() => realtime.close());
  const model = { letters: 0, refinements: 0 };
  const llm = await lib.startFakeOpenAiChatServer({
    apiKey: "test-key",
    port: PORTS.llm,
    host: "127.0.0.1",
    responder: (request) => {
      const name = request.body?.response_format?.json_schema?.name;
      const answer = lib.letterModel(request);
      if (name === "arztbrief") {
        model.letters += 1;
        return { kind: "slow", ms: LETTER_MS, then: answer };
      }
      if (name?.startsWith("refined_")) {
        model.refinements += 1;
        return { kind: "slow", ms: REFINE_MS, then: answer };
      }
      return answer;
    },
  });
  cleanups.push(() => llm.close());
  note(`S3 ${s3.endpoint}, Speechmatics batch ${batch.url}, realtime ${realtime.url}, chat API ${llm.url}`);

  const clientSecret = randomBytes(24).toString("base64url");
  const idp = await lib.startDevOidcProvider({
    issuer: ISSUER,
    port: PORTS.idp,
    audience: "skribent-api",
    clients: [
      {
        client_id: "skribent",
        client_secret: clientSecret,
        redirect_uris: [`${APP}/auth/callback`],
        post_logout_redirect_uris: [`${APP}/login?signedOut=1`],
      },
    ],
  });
  cleanups.push(() => idp.close());
  note(`identity provider ${idp.issuer} (the development provider, on its own: neither instance runs one)`);

  internalCa = makeInternalCa(path.join(tmp, "internal-ca"));
  instanceTls = internalCa.issue(INSTANCE_HOST);
  baseEnv = sharedEnv({
    database,
    cookieSecret: randomBytes(32).toString("base64url"),
    clientSecret,
    s3,
    fakes: { batch, realtime, llm },
  });
  // A migrates the empty database first; B and the worker find it migrated.
  await startInstance("A");
  await startInstance("B");
  const worker = startProcess("worker", process.execPath, [WORKER], {
    ...baseEnv,
    DATA_DIR: path.join(tmp, "data-worker"),
  });
  await waitFor("worker started", async () => fs.readFileSync(worker.log, "utf8").includes("[worker] started"));
  note(`worker up (pid ${worker.pid})`);

  const nginxDir = path.join(tmp, "nginx");
  fs.mkdirSync(nginxDir);
  fs.writeFileSync(path.join(nginxDir, "nginx.conf"), nginxConfig(nginxDir));
  const nginx = startProcess("nginx", NGINX, [
    "-p",
    nginxDir,
    "-c",
    path.join(nginxDir, "nginx.conf"),
    "-g",
    `daemon off; pid ${nginxDir}/nginx.pid; error_log stderr;`,
  ]);
  await waitFor("nginx up", () => fetch(`${APP}/resources/healthz`).then((r) => r.ok));
  note(
    `nginx up on :${PORTS.nginx} (pid ${nginx.pid}), round-robin over A :${PORTS.A} and B :${PORTS.B}, over verified TLS`,
  );
  endStep();

  // ---------------------------------------------------------------------------------------------------
  step("alternation: consecutive requests through nginx go to A and B in turn");
  const order = [];
  for (let i = 0; i < 6; i++) order.push((await call("GET", "/resources/healthz")).instance);
  note(`GET /resources/healthz ×6 answered by ${order.join(" ")}`);
  check(order.includes("A") && order.includes("B"), `only ${[...new Set(order)].join()} answered`);
  check(
    order.every((who, i) => i === 0 || who !== order[i - 1]),
    `requests did not alternate: ${order.join(" ")}`,
  );
  endStep();

  // ---------------------------------------------------------------------------------------------------
  step("sign-in through nginx (the OAuth state cookie made on one instance is checked on the other)");
  cookie = await signIn("anna-berger");
  const seen = [];
  for (let i = 0; i < 4; i++) {
    const r = await call("GET", "/api/files");
    seen.push(r.instance);
  }
  note(`the session works on both: GET /api/files ×4 answered by ${seen.join(" ")}`);
  check(seen.includes("A") && seen.includes("B"), "the session was not accepted by both instances");
  endStep();

  // ---------------------------------------------------------------------------------------------------
  step(`upload in parts (${(WAV_BYTES / 1e6).toFixed(0)} MB WAV); SIGTERM to A after the first part`);
  const wav = path.join(tmp, "consultation.wav");
  writeSilentWav(wav, WAV_BYTES);
  const start = await call("POST", "/api/upload-parts/start", {
    json: { file_name: "konsultation.wav", file_type: "audio/wav", file_size: WAV_BYTES, language_code: "de" },
  });
  say("POST", "/api/upload-parts/start", start);
  const { key, part_count: partCount, part_size: partSize } = start.data;
  check(partCount >= 2, `expected several parts, got ${partCount}`);
  const putPart = async (n) => {
    const urls = await call("POST", "/api/upload-parts/urls", { json: { key, part_numbers: [n] } });
    say("POST", `/api/upload-parts/urls [${n}]`, urls);
    const from = (n - 1) * partSize;
    const to = Math.min(from + partSize, WAV_BYTES) - 1;
    const t0 = Date.now();
    const put = await fetch(urls.data.parts[0].url, {
      method: "PUT",
      body: fs.createReadStream(wav, { start: from, end: to }),
      headers: { "content-length": String(to - from + 1) },
      duplex: "half",
    });
    check(put.ok, `part ${n}: PUT to S3 answered ${put.status}`);
    note(`[S3] PUT part ${n} (${to - from + 1} bytes) → ${put.status} (${Date.now() - t0} ms)`);
  };
  await putPart(1);
  const stopA1 = await stopProcess("A", "SIGTERM", undefined, "mid-upload");
  note(`A stopped by SIGTERM: exit ${stopA1.code ?? stopA1.signal} after ${stopA1.ms} ms`);
  const status = await call("POST", "/api/upload-parts/status", { json: { key } });
  say("POST", "/api/upload-parts/status", status);
  check(
    status.data.parts.length === 1 && status.data.parts[0].part_number === 1,
    `after the stop the store should hold part 1: ${JSON.stringify(status.data.parts)}`,
  );
  for (let n = 2; n <= partCount; n++) await putPart(n);
  const complete = await call("POST", "/api/upload-parts/complete", { json: { key } });
  say("POST", "/api/upload-parts/complete", complete);
  const metadata = await call("POST", "/api/update-file-metadata", {
    json: { s3_key: key, metadata: { template_id: "entlassbrief", display_name: "Scale-out Konsultation" } },
  });
  say("POST", "/api/update-file-metadata", metadata);
  check(complete.data.success && metadata.data.success, "the upload did not complete");
  await startInstance("A");
  endStep();

  // ---------------------------------------------------------------------------------------------------
  step("transcription: started by the upload, run by the worker, polled through both instances");
  const transcribe = await call("POST", "/api/transcribe_v2", { json: { s3_key: key } });
  say("POST", "/api/transcribe_v2", transcribe);
  const job = transcribe.data.job_name;
  const polls = { A: 0, B: 0 };
  const done = await waitFor(
    "transcript completed",
    async () => {
      const r = await call("GET", `/api/transcribe_v2/${job}/status`);
      polls[r.instance] += 1;
      if (r.data.status === "failed") throw new ProofError(`transcription failed: ${r.data.error}`);
      return r.data.status === "completed" && r.data;
    },
    { everyMs: 150 },
  );
  note(`completed; status polled by A ×${polls.A}, B ×${polls.B}; transcript ${done.transcript_key}`);
  const transcript = await call("GET", `/api/transcript_v2/${done.transcript_key}`);
  say("GET", "/api/transcript_v2/…", transcript);
  check(transcript.data.raw_transcript?.length > 0, "the transcript is empty");
  endStep();

  // ---------------------------------------------------------------------------------------------------
  step("letter: written by the worker (model takes 4 s); SIGKILL to A meanwhile");
  const findLetter = async () => {
    const r = await call("GET", "/api/arztbriefe");
    return { r, letter: r.data.arztbriefe.find((l) => l.metadata?.source_key === key) };
  };
  // transcript_and_letter is the default mode: the letter job was queued when the transcript completed.
  const letterJob = await call("POST", "/api/medical-letter-v2", {
    json: { source_key: key, original_filename: "konsultation.wav", metadata: { template_id: "entlassbrief" } },
    expect: [200, 202],
  });
  say("POST", "/api/medical-letter-v2", letterJob);
  check(letterJob.data.status === "processing", `the letter should be in the works: ${JSON.stringify(letterJob.data)}`);
  await waitFor("the model is writing", async () => model.letters >= 1);
  const killA = await stopProcess("A", "SIGKILL", undefined, "mid-letter");
  note(`A killed (SIGKILL) while the model writes: gone after ${killA.ms} ms`);
  const again = await call("POST", "/api/medical-letter-v2", {
    json: { source_key: key, original_filename: "konsultation.wav", metadata: { template_id: "entlassbrief" } },
    expect: [200, 202],
  });
  say("POST", "/api/medical-letter-v2 (asked again)", again);
  check(again.data.job_name === letterJob.data.job_name, "asking again started another letter job");
  const letter = await waitFor(
    "letter completed",
    async () => {
      const { letter: found } = await findLetter();
      if (found?.status === "failed") throw new ProofError("the letter failed");
      return found?.status === "completed" && found;
    },
    { everyMs: 200 },
  );
  note(`letter ${letter.key} completed, version ${letter.version}`);
  await startInstance("A");
  endStep();

  // ---------------------------------------------------------------------------------------------------
  step("refinement: SIGTERM to the instance answering it, mid-request; the refined letter is saved");
  const opened = await call("GET", `/api/arztbrief/${letter.key}`);
  say("GET", "/api/arztbrief/…", opened);
  await sleep(2_500); // nginx tries A again once fail_timeout is over
  const refineBody = {
    arztbrief_content: opened.data.content,
    query: "Bitte etwas förmlicher formulieren.",
    language_code: "de-DE",
    transcript_data: null,
  };
  // Which instance will answer is nginx's turn: ask, and stop whichever it is while the model works.
  const turn = (await call("GET", "/resources/healthz")).instance;
  const before = model.refinements;
  const refining = call("POST", "/api/refine-arztbrief-bulk", { json: refineBody, expect: [200, 500, 502, 504] });
  await waitFor("the model is refining", async () => model.refinements > before);
  const inFlight = (await callerOf(PORTS.llm)) ?? (turn === "A" ? "B" : "A");
  const stopped = await stopProcess(inFlight, "SIGTERM", undefined, "mid-request");
  note(
    `${inFlight} stopped by SIGTERM while it waited for the model: exit ${stopped?.code ?? stopped?.signal} after ${stopped?.ms} ms`,
  );
  const refined = await refining;
  say("POST", "/api/refine-arztbrief-bulk", refined);
  check(
    refined.status === 200,
    `the refinement in flight on the stopped instance was lost (${refined.status}): a stopping instance must finish the requests it has`,
  );
  const saved = await call("PUT", `/api/arztbrief/${letter.key}`, {
    json: { content: refined.data.refined_content, base_version: opened.data.version },
  });
  say("PUT", "/api/arztbrief/… (refined)", saved);
  check(saved.data.changed && saved.data.version === opened.data.version + 1, "the refined letter was not saved");
  await startInstance(inFlight);
  endStep();

  // ---------------------------------------------------------------------------------------------------
  step(`live recording over the WebSocket door; ${LIVE_SIGNAL} to the instance holding it, mid-recording`);
  await sleep(2_500);
  const buffers = liveBuffers(STRETCHES);
  const created = await call("POST", "/live/sessions", { json: { kind: "recording", language: "de" }, expect: [201] });
  say("POST", "/live/sessions", created);
  const sessionId = created.data.id;
  const db = new pg.Client({ connectionString: baseEnv.DATABASE_URL });
  await db.connect();
  cleanups.push(() => db.end());
  const START = {
    message: "StartRecognition",
    audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
    transcription_config: { language: "de" },
  };
  let lastN = 0;
  const track = (live) =>
    live.socket.on("message", (data) => (lastN = Math.max(lastN, JSON.parse(String(data)).n ?? 0)));
  let live = await openLiveSocket(sessionId);
  track(live);
  live.socket.send(JSON.stringify({ ...START, last_n: 0 }));
  const first = await live.next((m) => m.message === "RecognitionStarted");
  const runner = async () =>
    (await db.query("select runner_instance from live_sessions where id = $1", [sessionId])).rows[0]?.runner_instance;
  const holder = pids.get(Number((await runner()).split(":")[1]));
  note(`socket 1 open; RecognitionStarted (last_seq_no ${first.last_seq_no}); the run is on ${holder}`);
  const half = Math.floor(buffers.length / 2) + 3; // inside a stretch of speech, not at a pause
  let acked = 0;
  for (let i = 0; i < half; i++) {
    live.socket.send(buffers[i]);
    await sleep(20);
  }
  await live.next((m) => m.message === "AudioAdded" && m.seq_no === half);
  acked = half;
  const finalsBefore = live.messages.filter((m) => m.message === "AddTranscript").length;
  const stopLive = await stopProcess(holder, LIVE_SIGNAL, undefined, "mid-recording");
  const closeCode = await live.closed;
  note(
    `${holder} stopped by ${LIVE_SIGNAL} after ${acked} of ${buffers.length} buffers (${finalsBefore} finals so far): ` +
      `exit after ${stopLive.ms} ms, socket closed ${closeCode}`,
  );
  live = await openLiveSocket(sessionId);
  track(live);
  live.socket.send(JSON.stringify({ ...START, last_n: lastN }));
  const resumed = await live.next((m) => m.message === "RecognitionStarted");
  const holderNow = async () => pids.get(Number((await runner())?.split(":")[1]));
  const newHolder = await waitFor(
    "another instance taking the recording over",
    async () => {
      const now = await holderNow();
      return now && now !== holder ? now : undefined;
    },
    { timeoutMs: 45_000, everyMs: 500 },
  ).catch((error) => {
    throw new ProofError(`${error.message}: the recording has no run on a living instance`);
  });
  note(
    `socket 2 open; RecognitionStarted: the server holds ${resumed.last_seq_no} buffers; the run is on ${newHolder}`,
  );
  check(resumed.last_seq_no === acked, `the server holds ${resumed.last_seq_no} buffers, ${acked} were acknowledged`);
  check(newHolder && newHolder !== holder, "no other instance took the recording over");
  for (let i = resumed.last_seq_no; i < buffers.length; i++) {
    live.socket.send(buffers[i]);
    await sleep(20);
  }
  live.socket.send(JSON.stringify({ message: "EndOfStream", last_seq_no: buffers.length }));
  await live.next((m) => m.message === "EndOfTranscript", 30_000);
  live.socket.close(1000);
  const liveMessages = await call("GET", `/live/sessions/${sessionId}`);
  say("GET", "/live/sessions/…", liveMessages);
  const view = liveMessages.data;
  note(
    `the session holds ${view.buffers} of ${buffers.length} buffers (${view.seconds} s), ${view.transcript.length} speaker turns`,
  );
  check(view.buffers === buffers.length, `buffers lost: ${view.buffers} of ${buffers.length}`);
  const upgrades = nginxLog(/^\/live\/ws$/);
  note(`nginx passed the upgrades to ${upgrades.map((u) => u.upstreams.join("→")).join(", ")} (socket 1, socket 2)`);
  for (const upgrade of upgrades) current.served[upgrade.upstreams.at(-1)] += 1;
  // How much of each stretch of speech the transcript covers (its words' times against the audio's).
  const coverage = [];
  for (let k = 0; k < STRETCHES; k++) {
    const from = k * (SPEECH_S + PAUSE_S);
    const to = from + SPEECH_S;
    let covered = 0;
    for (const turn of view.transcript) covered += Math.max(0, Math.min(to, turn.end) - Math.max(from, turn.start));
    coverage.push(Math.min(1, covered / SPEECH_S));
  }
  note(
    `transcript covers the ${STRETCHES} stretches of speech: ${coverage.map((c) => `${Math.round(c * 100)}%`).join(" ")}`,
  );
  const cut = coverage.findIndex((c) => c < 0.9);
  if (cut >= 0) {
    const at = cut * (SPEECH_S + PAUSE_S);
    caveats.push(
      `live: the words spoken at the stop (stretch ${cut + 1}, ${at.toFixed(1)}–${(at + SPEECH_S).toFixed(1)} s, ` +
        `${Math.round(coverage[cut] * 100)}% in the transcript) were not recognised — the stopped run's engine ` +
        `had not finalised them and the new run starts after the buffers already held; the audio is complete`,
    );
  }
  check(
    coverage.filter((c) => c < 0.9).length <= 1,
    `more than the stretch at the stop is missing from the transcript: ${coverage.join()}`,
  );
  const savedLive = await call("POST", `/live/sessions/${sessionId}/save`, {
    json: { template_id: "entlassbrief", transcription_mode: "transcript_and_letter", audio_copy: false },
  });
  say("POST", "/live/sessions/…/save", savedLive);
  const liveKeys = [savedLive.data.recording_key, savedLive.data.audio_key];
  const liveLetter = await waitFor(
    "the live recording's letter",
    async () => {
      const r = await call("GET", "/api/arztbriefe");
      const found = r.data.arztbriefe.find((l) => liveKeys.includes(l.metadata?.source_key));
      if (found?.status === "failed") throw new ProofError("the live recording's letter failed");
      return found?.status === "completed" && found;
    },
    { everyMs: 250 },
  );
  note(`live recording saved (${liveKeys[0]}); its letter ${liveLetter.key} completed`);
  await startInstance(holder);
  endStep();

  // ---------------------------------------------------------------------------------------------------
  step("nothing lost, nothing twice: the database and the engines");
  const rows = (
    await db.query(
      `select r.storage_key, r.transcription_status,
         (select count(*) from transcripts t where t.recording_id = r.id)::int as transcripts,
         (select count(*) from transcription_jobs j where j.recording_id = r.id)::int as transcription_jobs,
         (select count(*) from letters l where l.recording_id = r.id)::int as letters,
         (select count(*) from letter_jobs j where j.recording_id = r.id)::int as letter_jobs,
         (select string_agg(j.status || '/' || j.attempts, ',') from letter_jobs j where j.recording_id = r.id) as letter_job,
         (select max(l.current_version) from letters l where l.recording_id = r.id)::int as version
       from recordings r order by r.created_at`,
    )
  ).rows;
  for (const row of rows)
    note(
      `${row.storage_key}: transcription ${row.transcription_status}, transcripts ${row.transcripts}, ` +
        `transcription jobs ${row.transcription_jobs}, letters ${row.letters}, letter jobs ${row.letter_jobs} ` +
        `(${row.letter_job}), letter version ${row.version}`,
    );
  check(rows.length === 2, `expected 2 recordings, found ${rows.length}`);
  for (const row of rows) {
    check(row.transcripts === 1 && row.letters === 1, `${row.storage_key}: not exactly one transcript and one letter`);
    check(
      row.letter_jobs === 1 && row.letter_job === "completed/1",
      `${row.storage_key}: letter job ${row.letter_job}`,
    );
  }
  check(rows[0].transcription_jobs === 1 && rows[0].version === 2, "the upload: one transcription job, letter v2");
  note(
    `engines: Speechmatics batch jobs ${batch.jobs.length}, realtime connections ${realtime.sessions.length}, ` +
      `letters written by the model ${model.letters}, refinements ${model.refinements}`,
  );
  check(batch.jobs.length === 1, `the batch engine ran ${batch.jobs.length} jobs for one upload`);
  check(model.letters === 2, `the model wrote ${model.letters} letters for two recordings`);
  endStep();

  // ---------------------------------------------------------------------------------------------------
  const total = { A: 0, B: 0 };
  console.log("\nSummary (requests answered per instance; nginx's access log for the live sockets):");
  for (const s of steps) {
    total.A += s.served.A;
    total.B += s.served.B;
    console.log(
      `  ${s.name.slice(0, 78).padEnd(78)} ${((s.ms ?? 0) / 1000).toFixed(1).padStart(5)} s   A ${String(s.served.A).padStart(3)}  B ${String(s.served.B).padStart(3)}`,
    );
  }
  check(total.A > 0 && total.B > 0, "one instance served nothing");
  const workflow = steps.slice(2);
  check(
    workflow.filter((s) => s.served.A > 0).length >= 3 && workflow.filter((s) => s.served.B > 0).length >= 3,
    "the workflow's steps were not shared between the instances",
  );
  for (const caveat of caveats) console.log(`\nCAVEAT ${caveat}`);
  console.log(
    `\nPROVEN in ${((Date.now() - started) / 1000).toFixed(1)} s: A answered ${total.A} requests, B ${total.B}; ` +
      `stopped: ${stops.join(", ")}; nothing lost.`,
  );
}

/**
 * Which instance has a request open to the engine at `port` (its answer header comes only with the answer):
 * the app process owning the established connection, from `ss`. Undefined when it cannot tell.
 */
async function callerOf(port) {
  try {
    const { stdout } = await run("ss", ["-tnpH", "state", "established", "dst", `127.0.0.1:${port}`]);
    const names = new Set([...stdout.matchAll(/pid=(\d+)/g)].map((m) => pids.get(Number(m[1]))).filter(Boolean));
    return names.size === 1 ? [...names][0] : undefined;
  } catch {
    return undefined;
  }
}

async function cleanup() {
  for (const [name] of [...children]) await stopProcess(name, "SIGTERM", 5_000).catch(() => undefined);
  for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => undefined);
}

let cleaning;
for (const signal of ["SIGINT", "SIGTERM"])
  process.once(signal, () => {
    console.error(`\n${signal}: stopping everything`);
    cleaning ??= cleanup();
    void cleaning.then(() => process.exit(130));
  });

try {
  await main();
  cleaning ??= cleanup();
  await cleaning;
} catch (error) {
  console.error(`\nNOT PROVEN: ${error instanceof ProofError ? error.message : (error?.stack ?? error)}`);
  for (const [name, entry] of children) console.error(`\n--- last lines of ${name} ---\n${tail(entry.log)}`);
  const logs = (name) => (tmp ? tail(path.join(tmp, `${name}.log`), 200) : "");
  if (/build\.entry\.module\.\w+ is not a function/.test(logs("A") + logs("B")))
    console.error("\nHint: build/ is older than server.mjs: run `npm run build`.");
  const workerLog = logs("worker");
  if (workerLog.includes("Object storage is not initialised"))
    console.error(
      `\nHint: ${WORKER} predates the worker's storage set-up (app/worker.server.ts): run \`npm run build\`.`,
    );
  process.exitCode = 1;
  cleaning ??= cleanup();
  await cleaning;
}
