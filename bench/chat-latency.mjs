#!/usr/bin/env node
// The chat's own latency (issue 8), through the built app: how long the app takes from a clinician's "send" to
// the question reaching the language model (sign-in check, PDF text, the stored turn, the prompt), to the first
// streamed word on the page, and to the whole answer. The model is the tests' protocol-faithful
// OpenAI-compatible server (tests/support/fake-openai-chat.ts, in this process) streaming word by word, so what
// is measured is the app, not a model. A bench prints figures; it is not a test (exit 1 only when a run fails).
//
// Usage: npm run bench:chat
//        npm run build && node bench/chat-latency.mjs --rounds 20 --pdf-pages 20 --word-ms 20
// Options: --rounds <conversations> (10): each is "clear chat", a question with a PDF, a follow-up question
//          --pdf-pages <pages of the PDF> (20; 0 = no PDF)  --word-ms <pause between streamed words> (20)
//          env BENCH_PORT (3460: app, +1 sign-in provider)
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadTestSupport } from "../scripts/fake-speech-bundle.mjs";
import { benchAppEnv, signIn, waitForApp } from "./support.mjs";

const { values: opts } = parseArgs({
  options: {
    rounds: { type: "string", default: "10" },
    "pdf-pages": { type: "string", default: "20" },
    "word-ms": { type: "string", default: "20" },
  },
});
const ROUNDS = Number(opts.rounds);
const PDF_PAGES = Number(opts["pdf-pages"]);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PORT = Number(process.env.BENCH_PORT ?? 3460);
const APP = `http://localhost:${PORT}`;

const sameSite = (cookie) => ({ cookie, origin: APP, "sec-fetch-site": "same-origin" });

/** One send as the page's script makes it; times in ms from the request. */
async function ask(cookie, question, pdf, arrivals) {
  const form = new FormData();
  form.set("intent", "send");
  form.set("question", question);
  if (pdf) form.append("pdf", new Blob([pdf], { type: "application/pdf" }), "Befund.pdf");
  const arrivalsBefore = arrivals.length;
  const t0 = performance.now();
  const response = await fetch(`${APP}/resources/chat-stream`, {
    method: "POST",
    headers: sameSite(cookie),
    body: form,
  });
  const headers = performance.now() - t0;
  if (!response.ok) throw new Error(`chat-stream: ${response.status} ${await response.text()}`);
  const decoder = new TextDecoder();
  let buffer = "";
  let firstText;
  let done;
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    const events = buffer.split("\n\n");
    buffer = events.pop();
    for (const event of events) {
      const data = event.split("\n").find((line) => line.startsWith("data:"));
      if (!data) continue;
      const message = JSON.parse(data.slice(5));
      if (message.type === "text" && firstText === undefined) firstText = performance.now() - t0;
      if (message.type === "error") throw new Error(`the answer failed: ${message.message}`);
      if (message.type === "done") done = performance.now() - t0;
    }
  }
  if (done === undefined || arrivals.length !== arrivalsBefore + 1) throw new Error("no answer, or not one model call");
  return { headers, toModel: arrivals.at(-1) - t0, firstText, done };
}

async function clear(cookie) {
  const response = await fetch(`${APP}/chat`, {
    method: "POST",
    headers: { ...sameSite(cookie), "content-type": "application/x-www-form-urlencoded" },
    body: "intent=clear",
    redirect: "manual",
  });
  if (response.status !== 302) throw new Error(`clear chat: ${response.status}`);
}

function summary(label, samples) {
  const line = (pick) => {
    const values = samples.map(pick).sort((a, b) => a - b);
    const at = (q) => values[Math.min(values.length - 1, Math.floor(q * values.length))];
    return `median ${at(0.5).toFixed(0)} ms, p95 ${at(0.95).toFixed(0)} ms`;
  };
  console.log(`${label} (${samples.length}):`);
  console.log(`  event stream opened:             ${line((s) => s.headers)}`);
  console.log(`  question reaches the model:      ${line((s) => s.toModel)}`);
  console.log(`  first streamed word on the page: ${line((s) => s.firstText)}`);
  console.log(`  whole answer:                    ${line((s) => s.done)}`);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-chat-"));
let app;
let llm;
try {
  const [{ startFakeOpenAiChatServer }, { letterModel }, { makeTextPdf, GERMAN_LINES }] = await Promise.all([
    loadTestSupport("fake-openai-chat", path.join(work, "support")),
    loadTestSupport("fake-llm-letters", path.join(work, "support")),
    loadTestSupport("pdf-fixtures", path.join(work, "support")),
  ]);
  const arrivals = [];
  llm = await startFakeOpenAiChatServer({
    apiKey: "test-key",
    responder: (request) => {
      arrivals.push(performance.now());
      return letterModel(request);
    },
  });
  llm.streamDelayMs = Number(opts["word-ms"]);
  const pdf =
    PDF_PAGES > 0
      ? await makeTextPdf(Array.from({ length: PDF_PAGES }, (_, page) => [`Seite ${page + 1}`, ...GERMAN_LINES]))
      : null;
  app = spawn(process.execPath, ["server/index.mjs"], {
    cwd: ROOT,
    env: benchAppEnv({
      port: PORT,
      dataDir: path.join(work, "data"),
      env: { LLM_ENGINE: "openai", LLM_OPENAI_URL: llm.url, LLM_OPENAI_API_KEY: "test-key" },
    }),
    stdio: ["ignore", "ignore", "inherit"],
  });
  await waitForApp(APP);
  const cookie = await signIn(APP, "lena-wagner");
  console.log(
    `chat latency: ${ROUNDS} conversations, ${pdf ? `a ${PDF_PAGES}-page PDF (${(pdf.byteLength / 1024).toFixed(0)} KiB)` : "no PDF"}, ` +
      `model streams a word every ${llm.streamDelayMs} ms`,
  );
  await clear(cookie);
  await ask(cookie, "Aufwärmen: was ist NYHA II?", null, arrivals); // the first request compiles and connects
  const first = [];
  const followUp = [];
  for (let round = 0; round < ROUNDS; round++) {
    await clear(cookie);
    first.push(await ask(cookie, "Fasse den Befund in drei Sätzen zusammen.", pdf, arrivals));
    followUp.push(await ask(cookie, "Welche Werte sind auffällig?", null, arrivals));
  }
  summary(pdf ? "first question, with the PDF" : "first question", first);
  summary("follow-up question", followUp);
  await clear(cookie);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  app?.kill("SIGTERM");
  await llm?.close();
  fs.rmSync(work, { recursive: true, force: true });
}
