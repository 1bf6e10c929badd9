// Starts the tests' protocol-faithful Speechmatics batch server (tests/support/fake-speechmatics.ts) on a
// fixed port, for Playwright's web servers and for trying the app by hand:
//   node scripts/fake-speech-server.mjs --port 3105
// then run the app with SPEECH_ENGINE=speechmatics SPEECHMATICS_API_KEY=test-key
// SPEECHMATICS_BATCH_URL=http://127.0.0.1:3105/eu1/v2. Every job returns the named two-speaker fixture.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadFakeSpeechmatics } from "./fake-speech-bundle.mjs";

const portFlag = process.argv.indexOf("--port");
const port = Number(portFlag > 0 ? process.argv[portFlag + 1] : 3105);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-fake-speech-"));
const { startFakeSpeechmatics } = await loadFakeSpeechmatics(dir);
const server = await startFakeSpeechmatics({ port, host: "127.0.0.1" });
console.log(`fake Speechmatics batch API at ${server.url} (key: test-key)`);
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}
