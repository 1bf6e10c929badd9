#!/usr/bin/env node
// The letter step on the embedded language-model engine (llama.cpp through node-llama-cpp,
// app/services/llm/local-llm.server.ts): seconds of letter writing per minute of consultation, through the
// real pipeline the letter job runs (app/services/letters/job.server.ts → generateLetter in
// app/services/letters/generate.server.ts: one request when the consultation fits the context window,
// map-reduce over parts of the transcript when it does not — long-transcript.ts, map-reduce.server.ts).
// Each case is a consultation of ../shared/eval (the German cases and the ACI-Bench dialogues), turned into a
// speaker-labelled transcript as an engine would deliver it (buildTranscript: one word per token, the
// dataset's speakers as the engine's speaker labels), with a system template of
// app/data/templates/system (the German cases name theirs, "Arztbrief" = default; ACI-Bench's get default in
// en-GB). The eval data gives no durations: a consultation's minutes are estimated from its word count at
// WORDS_PER_MINUTE, and the transcript's word times are spread at that pace.
// The model is configured as the tests run stories260K (local-llm.server.test.ts, local-letter.server.test.ts):
// extendContext (stories260K was trained on 2048 tokens of context; a real letter model's training context is
// far larger, so there it changes nothing and is left off, as the app does) and 1 thread. The context is the
// app's default LLM_CONTEXT_TOKENS, 8192, not the tests' 4096: stories260K's vocabulary has only 512 tokens,
// so German and English cost about one token per 2 characters, and at 4096 no system template fits — the
// letter system message alone is ~1,220 tokens, the final request's fixed part 2,570–3,800, its answer budget
// 1,638: generateLetter refuses at once ("context window is too small"). `--context 4096` shows that.
// stories260K picks each answer's document_type at random; "other" would stop the letter at the pipeline's
// guard, so by default (with stories260K) the bench sets it to the case's kind after the model has answered
// (--no-fix-type leaves it, and a refused case is reported as failed).
// A bench prints figures; it is not a test (exit 1 only when no case yields a letter or the measurement fails).
//
// THE REAL LETTER MODEL'S SPEED CANNOT BE MEASURED HERE. The only GGUF these machines have is
// ../shared/models/stories260K.gguf: 260K parameters, children's stories, not instruction-tuned. The JSON-schema
// grammar still forces schema-valid answers, so the whole pipeline runs end to end, but the text is
// meaningless and each token costs next to nothing. The default letter model, Ministral 3 3B Instruct Q4_K_M
// (2.1 GB, ADR 0027), is thousands of times larger: these figures are the pipeline's overhead around the
// model (planning, tokenizing, grammar-constrained sampling, prompt evaluation, validation), not how fast
// letters are written. Where a real model file is, pass it: --model PATH.
//
// The measurement runs in a child process (its peak RSS is its own; llama.cpp's log lines go to a log file,
// --verbose shows them). The TypeScript is bundled with esbuild (scripts/bundle-source.mjs).
//
// Usage: npm run bench:letter-step
//        node bench/letter-step.mjs --cases 23 --threads 2
//        node bench/letter-step.mjs --model /data/models/Ministral-3-3B-Instruct-2512-Q4_K_M.gguf --threads 2
// Options: --model <GGUF> (../shared/models/stories260K.gguf)  --cases <n> (DEFAULT_CASES: the 3 German
//          cases, then ACI-Bench's in order; 23 = all)  --threads <n> (1, as the tests; the app's
//          LOCAL_LLM_THREADS defaults to 2)  --context <LLM_CONTEXT_TOKENS> (8192, the app's default)
//          --template <system template id> (the case's, else default)  --fix-type / --no-fix-type  --verbose
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const EVAL = path.resolve(ROOT, "../shared/eval");
const STORIES = path.resolve(ROOT, "../shared/models/stories260K.gguf");
const WORDS_PER_MINUTE = 130;
// The German cases (~50 s each here); ACI-Bench's (7–12 minutes, map-reduce) take 2–3 minutes each, and
// stories260K often runs an unbounded string up to the answer budget there, so the request is refused as
// cut off (3 attempts) and the case fails: --cases 5 or more shows them.
const DEFAULT_CASES = 3;

const { values: opts } = parseArgs({
  options: {
    model: { type: "string", default: STORIES },
    cases: { type: "string", default: String(DEFAULT_CASES) },
    threads: { type: "string", default: "1" },
    context: { type: "string", default: "8192" },
    template: { type: "string" },
    "fix-type": { type: "boolean" },
    "no-fix-type": { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
    child: { type: "string" },
  },
});

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// ---- Cases ------------------------------------------------------------------------------------------------

/** The German cases first (short, the app's own language), then ACI-Bench's dialogues in file order. */
function loadCases() {
  const read = (name) => JSON.parse(fs.readFileSync(path.join(EVAL, name, "cases.json"), "utf8"));
  const german = read("de").map((c) => ({
    id: c.id,
    source: `de (${c.kind})`,
    language: "de",
    template: c.template,
    dictation: c.kind === "dictation",
    dialogue: c.dialogue,
  }));
  const aci = read("aci-bench").map((c) => ({
    id: c.id,
    source: `ACI-Bench (${c.source_dataset})`,
    language: "en",
    template: undefined,
    dictation: false,
    dialogue: c.dialogue,
  }));
  return [...german, ...aci];
}

// ---- Child: the measurements ------------------------------------------------------------------------------

const PUNCTUATION = /^\p{P}+$/u;

/** The dialogue as an engine's words: one per whitespace-separated token, spread at WORDS_PER_MINUTE. */
function engineResult(kase) {
  const step = 60 / WORDS_PER_MINUTE;
  const words = [];
  let at = 0;
  for (const turn of kase.dialogue)
    for (const token of turn.text.split(/\s+/)) {
      if (!token) continue;
      const punctuation = PUNCTUATION.test(token);
      words.push({
        text: token,
        start: at,
        end: at + step * 0.8,
        confidence: 0.95,
        speaker: turn.speaker,
        punctuation,
      });
      if (!punctuation) at += step;
    }
  return { engine: "local", language: kase.language, audioSeconds: at, words };
}

function osThreads() {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(fs.readFileSync("/proc/self/status", "utf8"))?.[1]) || null;
  } catch {
    return null;
  }
}

async function measure(job) {
  const lib = await import(pathToFileURL(job.bundle).href);
  const model = lib.createLocalLanguageModel({
    model: job.model,
    threads: job.threads,
    contextTokens: job.context,
    extendContext: job.extendContext,
  });
  const loadStarted = performance.now();
  await model.load();
  const loadMs = performance.now() - loadStarted;

  // stories260K picks the answer's document_type (patient_conversation | doctor_dictation | other) at random,
  // and "other" makes the pipeline's guard stop the letter ("not a patient conversation"). With --fix-type
  // (the default for stories260K) each answer's document_type is set to what the case is, AFTER the model has
  // written the whole answer: what a model that understands the consultation would say, at no cost in time.
  let wanted = "patient_conversation";
  const typeFixes = { answers: 0, changed: 0 };
  const measured = job.fixType
    ? Object.assign(Object.create(model), {
        async generateStructured(request) {
          const result = await model.generateStructured(request);
          const value = result.value;
          if (value && typeof value === "object" && "document_type" in value) {
            typeFixes.answers++;
            if (value.document_type === wanted) return result;
            typeFixes.changed++;
            return { ...result, value: { ...value, document_type: wanted } };
          }
          return result;
        },
      })
    : model;

  const results = [];
  let peakThreads = osThreads();
  const cases = loadCases().filter((c) => job.caseIds.includes(c.id));
  for (const kase of cases) {
    const letterLanguage = kase.language === "en" ? "en-GB" : "de-DE";
    const templateId =
      job.template ??
      lib.listSystemTemplates(letterLanguage).find((t) => t.name === kase.template)?.id ??
      (kase.template ? null : "default");
    if (!templateId) throw new Error(`${kase.id}: no system template is called "${kase.template}"`);
    const template = lib.getSystemTemplate(templateId, letterLanguage);
    if (!template) throw new Error(`no system template "${templateId}"`);
    const transcript = lib.buildTranscript(engineResult(kase));
    wanted = kase.dictation ? "doctor_dictation" : "patient_conversation";
    const requests = [];
    const started = performance.now();
    let last = started;
    const base = {
      id: kase.id,
      source: kase.source,
      template: `${templateId} (${template.elements.length} sections)`,
      words: transcript.word_count,
      transcriptTokens: model.countTokens(transcript.formatted_transcript),
    };
    try {
      // As runLetterJob calls it: the template's name, prompt and elements; no context documents; no style
      // examples (AI Learning off); a new letter.
      const letter = await lib.generateLetter({
        model: measured,
        language: letterLanguage,
        template: {
          name: template.name,
          prompt: template.prompt,
          elements: template.elements.map((e) => ({ name: e.name, description: e.description })),
        },
        transcript,
        context: [],
        styleExamples: [],
        mode: "create",
        onUsage: (event) => {
          const now = performance.now();
          requests.push({ phase: event.phase, ms: now - last, ...event.usage });
          last = now;
        },
      });
      results.push({
        ...base,
        ok: true,
        ms: performance.now() - started,
        strategy: letter.strategy,
        requests,
        requestCount: letter.requests,
        usage: letter.usage,
        documentType: letter.documentType,
        sectionChars: letter.sections.map((s) => s.text.length),
      });
    } catch (error) {
      results.push({
        ...base,
        ok: false,
        ms: performance.now() - started,
        requests,
        error: `${error?.name ?? "Error"}: ${error?.message ?? error}${error?.cause ? ` (${error.cause.message ?? error.cause})` : ""}`,
      });
    }
    peakThreads = Math.max(peakThreads ?? 0, osThreads() ?? 0) || null;
  }
  const contextSize = model.contextTokens;
  await lib.unloadLocalLanguageModel();
  return {
    loadMs,
    contextSize,
    typeFixes,
    results,
    peakRss: process.resourceUsage().maxRSS * 1024,
    osThreads: peakThreads,
  };
}

// ---- Parent: bundle, child, report ------------------------------------------------------------------------

async function bundle(dir) {
  const { bundleForNode } = await import("../scripts/bundle-source.mjs");
  const entry = path.join(dir, "entry.ts");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    entry,
    [
      `export { createLocalLanguageModel } from ${JSON.stringify(path.join(ROOT, "app/services/llm/local-llm.server.ts"))};`,
      `export { unloadLocalLanguageModel } from ${JSON.stringify(path.join(ROOT, "app/services/llm/local-llm-runtime.server.ts"))};`,
      `export { generateLetter } from ${JSON.stringify(path.join(ROOT, "app/services/letters/generate.server.ts"))};`,
      `export { buildTranscript } from ${JSON.stringify(path.join(ROOT, "app/services/speech/transcript-format.ts"))};`,
      `export { getSystemTemplate, listSystemTemplates } from ${JSON.stringify(path.join(ROOT, "app/services/templates/system-templates.server.ts"))};`,
    ].join("\n"),
  );
  return bundleForNode(entry, path.join(dir, "letter-step.mjs"));
}

function runChild(job, log, children) {
  return new Promise((resolve, reject) => {
    const out = opts.verbose ? "inherit" : fs.openSync(log, "w");
    // cwd: the system templates are read from app/data/templates/system below it.
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--child", JSON.stringify(job)], {
      cwd: ROOT,
      stdio: ["ignore", out, out, "ipc"],
    });
    children.add(child);
    if (typeof out === "number") fs.closeSync(out);
    let answer;
    child.on("message", (message) => (answer = message));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      children.delete(child);
      if (answer?.result) return resolve(answer.result);
      const tail = opts.verbose ? "" : fs.readFileSync(log, "utf8").split("\n").slice(-30).join("\n");
      reject(new Error(`${answer?.error ?? `the measuring process ended (${signal ?? `exit ${code}`})`}\n${tail}`));
    });
  });
}

function report(job, r, wallMs) {
  const stories = path.resolve(job.model) === STORIES;
  const minutesOf = (c) => c.words / WORDS_PER_MINUTE;
  const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  const s = (ms) => (ms / 1000).toFixed(1);

  console.log(
    `\nThe letter step on the local engine (llama.cpp via node-llama-cpp): generateLetter as the letter job calls it.\n` +
      `model ${path.basename(job.model)} (${mb(fs.statSync(job.model).size)}), LLM_CONTEXT_TOKENS ${job.context}` +
      `${job.extendContext ? " with extendContext (as the tests run stories260K)" : ""}, context ${r.contextSize} tokens, ` +
      `${job.threads} thread(s).\nmachine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, load average ` +
      `${os.loadavg()[0].toFixed(1)}, node ${process.version}. Minutes estimated at ${WORDS_PER_MINUTE} words per minute ` +
      `(the eval data gives no durations).\n`,
  );
  if (stories)
    console.log(
      "  NOTE: stories260K.gguf is a 260K-parameter model of children's stories, NOT instruction-tuned. The JSON-schema\n" +
        "  grammar forces schema-valid answers, so the pipeline runs end to end, but the letters are meaningless.\n" +
        "  A real letter model — Ministral 3 3B Instruct Q4_K_M, 2.1 GB, the default (ADR 0027) — is thousands of\n" +
        "  times larger (about 3 billion parameters against 260 thousand): these figures measure the PIPELINE'S\n" +
        "  OVERHEAD around the model, NOT letter-writing speed. To measure a real model the same way:\n" +
        "    node bench/letter-step.mjs --model /path/to/Ministral-3-3B-Instruct-2512-Q4_K_M.gguf --threads 2\n" +
        "  (docs/models.md: `npm run models -- --only llm` fetches it where there is internet)\n",
    );

  const header = [
    ["case", 28, "l"],
    ["words", 6],
    ["≈min", 6],
    ["transcr.tok", 12],
    ["strategy", 11],
    ["requests", 9],
    ["tokens in", 10],
    ["tokens out", 11],
    ["wall s", 8],
    ["s/min", 7],
  ];
  const line = (cells) =>
    "  " +
    cells.map((cell, i) => (header[i][2] === "l" ? cell.padEnd(header[i][1]) : cell.padStart(header[i][1]))).join(" ");
  console.log(line(header.map((h) => h[0])));
  for (const c of r.results) {
    const minutes = minutesOf(c);
    console.log(
      line([
        c.id,
        String(c.words),
        minutes.toFixed(1),
        String(c.transcriptTokens),
        c.ok ? c.strategy : "FAILED",
        c.ok ? String(c.requestCount) : `${c.requests.length}+1`,
        c.ok ? String(c.usage.promptTokens) : "—",
        c.ok ? String(c.usage.completionTokens) : "—",
        s(c.ms),
        (c.ms / 1000 / minutes).toFixed(2),
      ]),
    );
  }

  console.log(
    "\n  Requests per case (phase: seconds, tokens in → out; map = notes per part, reduce = condensing notes):",
  );
  for (const c of r.results) {
    const phases = c.requests.map((q) => `${q.phase} ${s(q.ms)} s ${q.promptTokens}→${q.completionTokens}`).join(", ");
    console.log(`    ${c.id.padEnd(28)} ${c.template}; ${phases || "no request finished"}`);
    if (!c.ok) console.log(`      FAILED: ${c.error}`);
  }

  const ok = r.results.filter((c) => c.ok);
  if (ok.length) {
    const perMinute = ok.map((c) => c.ms / 1000 / minutesOf(c));
    const tokensOut = ok.reduce((n, c) => n + c.usage.completionTokens, 0);
    const tokensIn = ok.reduce((n, c) => n + c.usage.promptTokens, 0);
    const genMs = ok.reduce((n, c) => n + c.ms, 0);
    console.log(
      `\n  median over ${ok.length} case(s): ${median(perMinute).toFixed(2)} s of letter step per consultation minute ` +
        `(range ${Math.min(...perMinute).toFixed(2)}–${Math.max(...perMinute).toFixed(2)}), ` +
        `${s(median(ok.map((c) => c.ms)))} s wall per letter, ${median(ok.map((c) => c.requestCount))} request(s) per letter`,
    );
    console.log(
      `  throughput over all cases: ${tokensIn} tokens in, ${tokensOut} tokens out in ${s(genMs)} s ` +
        `(${(tokensOut / (genMs / 1000)).toFixed(0)} tokens out per second, prompt evaluation included)`,
    );
  }
  console.log(
    `  model load (once, not in the table; includes hashing the file against its pin): ${s(r.loadMs)} s\n` +
      `  peak RSS of the measuring process: ${mb(r.peakRss)}\n` +
      `  threads: ${job.threads} for llama.cpp's context (LOCAL_LLM_THREADS, the app's default 2); the measuring process had up to ` +
      `${r.osThreads ?? "?"} OS threads (Node's own included)\n` +
      `  bench wall time (bundling, child start, load, all cases): ${s(wallMs)} s`,
  );
  if (stories)
    console.log(
      "\n  Again: with stories260K these are the pipeline's overhead figures. Ministral 3 3B needs far more time per\n" +
        "  token (and per prompt token) on a CPU; run this bench with --model on a machine that has the real file.",
    );
  if (job.fixType)
    console.log(
      `  document_type: stories260K chose it at random; the bench set it to the case's kind in ${r.typeFixes.changed} ` +
        `of ${r.typeFixes.answers} answers (after each answer was written; --no-fix-type leaves it)`,
    );
  if (stories && job.context < 8192)
    console.log(
      `  LLM_CONTEXT_TOKENS ${job.context}: stories260K's 512-token vocabulary makes the letter prompts' fixed parts ` +
        "2,570–3,800 tokens; below 8192 the pipeline may refuse every case.",
    );
  const failed = r.results.filter((c) => !c.ok);
  if (failed.length)
    console.log(
      `\n  ${failed.length} case(s) FAILED (see above)` +
        (stories
          ? ": with stories260K, a cut-off or refused answer is the model's nonsense, not the pipeline's."
          : "."),
    );
  return ok.length > 0;
}

async function main() {
  const started = performance.now();
  const all = loadCases();
  const count = Number(opts.cases);
  const threads = Number(opts.threads);
  const context = Number(opts.context);
  if (!(Number.isInteger(count) && count >= 1)) throw new Error(`--cases must be 1…${all.length}`);
  if (!(Number.isInteger(threads) && threads >= 1)) throw new Error("--threads must be ≥ 1");
  if (!(Number.isInteger(context) && context >= 1024)) throw new Error("--context must be ≥ 1024 (LLM_CONTEXT_TOKENS)");
  const model = path.resolve(opts.model);
  if (!fs.existsSync(model)) throw new Error(`${model} is missing (--model PATH)`);
  const cases = all.slice(0, count);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-letter-"));
  const children = new Set();
  const onSignal = (signal) => {
    for (const child of children) child.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const job = {
      bundle: await bundle(path.join(dir, "bundle")),
      model,
      threads,
      context,
      // As the tests run stories260K (trained on short contexts); the app never sets it for a real model.
      extendContext: model === STORIES,
      template: opts.template,
      fixType: opts["no-fix-type"] ? false : (opts["fix-type"] ?? model === STORIES),
      // Ids only: the child reads the cases itself (all of them would not fit into one command-line argument).
      caseIds: cases.map((c) => c.id),
    };
    console.log(
      `writing ${cases.length} letter(s) of ${all.length} cases with ${path.basename(model)}, ${threads} thread(s)…`,
    );
    const result = await runChild(job, path.join(dir, "llama.log"), children);
    return report(job, result, performance.now() - started);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (opts.child) {
  measure(JSON.parse(opts.child)).then(
    (result) => process.send({ result }, () => process.exit(0)),
    (error) => process.send({ error: error?.stack ?? String(error) }, () => process.exit(1)),
  );
} else {
  main().then(
    (ok) => process.exit(ok ? 0 : 1),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
