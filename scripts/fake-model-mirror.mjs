// Starts the tests' protocol-faithful model mirror (tests/support/model-mirror.ts) serving the small real models of
// ../shared/models under their catalogue names, and on its Hugging Face hub routes a Parakeet-shaped test model
// (tests/support/parakeet-test-model.ts) as `hf:skribent-tests/parakeet-tdt-test/parakeet-test` — it hears
// "Guten Morgen. Was führt Sie zu mir" at the first onsets of sound — for Playwright and for trying the first-start
// download by hand:
//   node scripts/fake-model-mirror.mjs --port 3110 [--hold] [--throttle BYTES_PER_SECOND]
// then run the app with MODELS_URL=http://127.0.0.1:3110. With --hold every file answers 503 until
// `curl -X POST http://127.0.0.1:3110/_control/release` (and `/_control/hold` holds it again).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadTestSupport } from "./fake-speech-bundle.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SHARED = path.resolve(ROOT, "../shared/models");
const portFlag = process.argv.indexOf("--port");
const port = Number(portFlag > 0 ? process.argv[portFlag + 1] : 3110);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-fake-mirror-"));
const { startModelMirror } = await loadTestSupport("model-mirror", dir);
const { writeParakeetTestModel } = await loadTestSupport("parakeet-test-model", dir);
const mirror = await startModelMirror({ port, control: true });
for (const name of ["silero_vad.onnx", "for-tests-ggml-tiny.bin", "stories260K.gguf"])
  mirror.serve(name, path.join(SHARED, name));
// At most five tokens per onset (sherpa-onnx's max_tokens_per_frame); duration 0 keeps the next on the same frame.
const word = (tokens) => tokens.map((token, i) => ({ token, frames: i === tokens.length - 1 ? 1 : 0 }));
const parakeet = await writeParakeetTestModel(path.join(dir, "parakeet"), [
  ...word(["▁Guten", "▁Morgen", "."]),
  ...word(["▁Was", "▁führt", "▁Sie", "▁zu", "▁mir"]),
  ...word(["?"]),
]);
for (const [part, file] of Object.entries({
  "encoder.onnx": parakeet.encoder,
  "decoder.onnx": parakeet.decoder,
  "joiner.onnx": parakeet.joiner,
  "tokens.txt": parakeet.tokens,
})) {
  const bytes = fs.readFileSync(file);
  // Pinned from the hub's LFS hash; with MODELS_URL set the bytes come from the mirror by name.
  mirror.serveHub({ repo: "skribent-tests/parakeet-tdt-test", file: `parakeet-test.${part}`, bytes });
  mirror.serve(`parakeet-test.${part}`, bytes);
}
if (process.argv.includes("--hold")) mirror.hold();
const throttleFlag = process.argv.indexOf("--throttle");
if (throttleFlag > 0) mirror.throttle(Number(process.argv[throttleFlag + 1]));
console.log(`fake model mirror at ${mirror.url}${process.argv.includes("--hold") ? " (on hold)" : ""}`);
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, async () => {
    await mirror.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}
