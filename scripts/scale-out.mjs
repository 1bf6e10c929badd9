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

// The parts, in scripts/scale-out/: config (ports, addresses, timings), report (steps, checks, the summary),
// processes (children by pid, cleanup), instances (A and B over TLS), nginx, client (calls through nginx, sign-in),
// start (the first step), sessions (ended on one instance, refused on both), workflow (upload to refinement), live
// (the live recording), verify (the last step).
import fs from "node:fs";
import path from "node:path";
import { NGINX, ROOT, WORKER } from "./scale-out/config.mjs";
import { liveRecording } from "./scale-out/live.mjs";
import { sessionsEndEverywhere } from "./scale-out/sessions.mjs";
import { children, cleanup, makeTmp, tail, tmp } from "./scale-out/processes.mjs";
import { ProofError, summarise } from "./scale-out/report.mjs";
import { startAll } from "./scale-out/start.mjs";
import { logsOnlyToStreams, nothingLost } from "./scale-out/verify.mjs";
import {
  alternation,
  refineLetter,
  signInThroughNginx,
  transcription,
  uploadInParts,
  writeLetter,
} from "./scale-out/workflow.mjs";

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
  makeTmp();

  const { batch, realtime, model } = await startAll();
  await alternation();
  await signInThroughNginx();
  await sessionsEndEverywhere();
  const key = await uploadInParts();
  await transcription(key);
  const letter = await writeLetter(key, model);
  await refineLetter(letter, model);
  const db = await liveRecording();
  await nothingLost({ db, batch, realtime, model });
  logsOnlyToStreams();
  summarise();
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
    console.error("\nHint: build/ is older than server/index.mjs: run `npm run build`.");
  const workerLog = logs("worker");
  if (workerLog.includes("Object storage is not initialised"))
    console.error(
      `\nHint: ${WORKER} predates the worker's storage set-up (app/worker.server.ts): run \`npm run build\`.`,
    );
  process.exitCode = 1;
  cleaning ??= cleanup();
  await cleaning;
}
