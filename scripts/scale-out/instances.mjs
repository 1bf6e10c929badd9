// The app instances A and B: the configuration every Skribent process shares, their TLS from the internal CA,
// starting one until its health check answers, and telling them apart by pid.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import https from "node:https";
import path from "node:path";
import { INSTANCE_HOST, makeInternalCa } from "../internal-ca.mjs";
import { APP, ISSUER, PG, PORTS, run } from "./config.mjs";
import { startProcess, tail, tmp, waitFor } from "./processes.mjs";
import { ProofError, note } from "./report.mjs";

// ---------------------------------------------------------------------------------------------------------
// The shared configuration of every Skribent process: what must be the same on each of them.

function sharedEnv({ database, cookieSecret, clientSecret, s3, fakes }) {
  const env = { ...process.env };
  // This machine's own settings must not leak into the proof (a developer's .env, another DATA_DIR, …).
  for (const key of Object.keys(env))
    if (/^(S3_|OIDC_|SPEECH|LLM_|LOCAL_|DEV_OIDC|RATE_LIMIT|ANTIVIRUS_)/.test(key)) delete env[key];
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
    // Declined on purpose, as production allows: the upload scan has its own tests against a real clamd (ADR 0024).
    ANTIVIRUS_URL: "none",
    // nginx (on this machine) replaces X-Forwarded-For with its client's address: the instances believe it from
    // loopback only, so a client that reached an instance past nginx could not name its own address.
    TRUST_PROXY: "loopback",
  };
}

export let baseEnv;
export const pids = new Map(); // pid → instance name, for the live runner's row
// The internal CA nginx trusts, and the one certificate (for INSTANCE_HOST) both instances serve.
export let internalCa;
let instanceTls;

/** The internal CA and the instances' certificate, and the environment every Skribent process gets. */
export function prepareInstances({ database, clientSecret, s3, fakes }) {
  internalCa = makeInternalCa(path.join(tmp, "internal-ca"));
  instanceTls = internalCa.issue(INSTANCE_HOST);
  baseEnv = sharedEnv({
    database,
    cookieSecret: randomBytes(32).toString("base64url"),
    clientSecret,
    s3,
    fakes,
  });
}

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

export async function startInstance(name) {
  const t0 = Date.now();
  const entry = startProcess(name, process.execPath, ["server/index.mjs"], {
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

/**
 * Which instance has a request open to the engine at `port` (its answer header comes only with the answer):
 * the app process owning the established connection, from `ss`. Undefined when it cannot tell.
 */
export async function callerOf(port) {
  try {
    const { stdout } = await run("ss", ["-tnpH", "state", "established", "dst", `127.0.0.1:${port}`]);
    const names = new Set([...stdout.matchAll(/pid=(\d+)/g)].map((m) => pids.get(Number(m[1]))).filter(Boolean));
    return names.size === 1 ? [...names][0] : undefined;
  } catch {
    return undefined;
  }
}
