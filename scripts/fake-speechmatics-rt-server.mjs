// Starts the tests' protocol-faithful Speechmatics realtime server (tests/support/fake-speechmatics-rt.ts) on a
// fixed port, for Playwright's web servers, benches and trying the app by hand:
//   node scripts/fake-speechmatics-rt-server.mjs --port 3107 [--script lines.json]
// then run the app with SPEECH_LIVE_ENGINE=speechmatics SPEECHMATICS_API_KEY=test-key and the two URLs it
// prints. Each stretch of speech gets the next line of the script: a JSON array of {"speaker"?, "text"}
// (a short German two-speaker consultation by default).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadFakeSpeechmaticsRt } from "./fake-speech-bundle.mjs";

function flag(name) {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : undefined;
}

const port = Number(flag("--port") ?? 3107);
const scriptFile = flag("--script");
let script;
if (scriptFile) {
  script = JSON.parse(fs.readFileSync(scriptFile, "utf8"));
  if (!Array.isArray(script) || !script.every((line) => typeof line?.text === "string")) {
    console.error(`${scriptFile}: expected a JSON array of {"speaker"?: string, "text": string}`);
    process.exit(1);
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-fake-speechmatics-rt-"));
const { startFakeSpeechmaticsRt } = await loadFakeSpeechmaticsRt(dir);
const server = await startFakeSpeechmaticsRt({ port, host: "127.0.0.1", ...(script ? { script } : {}) });
console.log(`fake Speechmatics realtime API at ${server.url} (key: ${server.apiKey})`);
console.log(`  SPEECHMATICS_RT_URL=${server.url} SPEECHMATICS_MP_URL=${server.managementUrl}`);
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}
