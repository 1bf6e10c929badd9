// Starts the tests' protocol-faithful OpenAI-compatible chat-completions server (tests/support/fake-openai-chat.ts)
// with the named letter behaviour of tests/support/fake-llm-letters.ts, for Playwright and for trying the app:
//   node scripts/fake-llm-server.mjs --port 3106
// then run the app with LLM_ENGINE=openai LLM_OPENAI_URL=http://127.0.0.1:3106/v1 LLM_OPENAI_API_KEY=test-key.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundleForNode } from "./bundle-source.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const portFlag = process.argv.indexOf("--port");
const port = Number(portFlag > 0 ? process.argv[portFlag + 1] : 3106);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-fake-llm-"));
const entry = path.join(dir, "entry.ts");
fs.writeFileSync(
  entry,
  `export { startFakeOpenAiChatServer } from ${JSON.stringify(path.join(ROOT, "tests/support/fake-openai-chat.ts"))};\n` +
    `export { letterModel } from ${JSON.stringify(path.join(ROOT, "tests/support/fake-llm-letters.ts"))};\n`,
);
const outfile = await bundleForNode(entry, path.join(dir, "fake-llm.mjs"));
const { startFakeOpenAiChatServer, letterModel } = await import(pathToFileURL(outfile).href);
const server = await startFakeOpenAiChatServer({ apiKey: "test-key", responder: letterModel, port, host: "127.0.0.1" });
console.log(`fake OpenAI-compatible chat API at ${server.url} (key: test-key)`);
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}
