// The first step: a fresh PostgreSQL database, S3, the engines, the identity provider, instances A and B, the
// worker and nginx, each stopped again at the end (cleanups, and the children by pid).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { bundleForNode } from "../bundle-source.mjs";
import { APP, ISSUER, LETTER_MS, PG, PORTS, REFINE_MS, ROOT, WORKER, run } from "./config.mjs";
import { baseEnv, prepareInstances, startInstance } from "./instances.mjs";
import { startNginx } from "./nginx.mjs";
import { cleanups, startProcess, tmp, waitFor } from "./processes.mjs";
import { endStep, note, step } from "./report.mjs";

/** Starts everything; returns the engines and the fake model's counts, which the last step checks. */
export async function startAll() {
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

  prepareInstances({ database, clientSecret, s3, fakes: { batch, realtime, llm } });
  // A migrates the empty database first; B and the worker find it migrated.
  await startInstance("A");
  await startInstance("B");
  const worker = startProcess("worker", process.execPath, [WORKER], {
    ...baseEnv,
    DATA_DIR: path.join(tmp, "data-worker"),
  });
  await waitFor("worker started", async () => fs.readFileSync(worker.log, "utf8").includes("[worker] started"));
  note(`worker up (pid ${worker.pid})`);

  await startNginx();
  endStep();
  return { batch, realtime, model };
}
