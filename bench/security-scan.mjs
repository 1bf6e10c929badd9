#!/usr/bin/env node
// Two off-the-shelf scanners against the built app, each signed in as its own demo clinician with freshly seeded
// data (a real recording, its transcript and letter, templates, a prompt, a PDF, a live recording): sqlmap (SQL
// injection) on every JSON call of app/routes/api.* with real ids, on the screens' query parameters and on the
// forms' fields; then wapiti (crawler + attack modules: XSS, stored XSS, SQL, command and file injection, CRLF,
// open redirect, SSRF, CSRF, backup files, HTTP methods, cookie flags, CSP and security headers) over everything
// it reaches from the workspace. A bench prints figures; findings are not failures (they go to docs/security.md
// with their disposition). Exit 1 only when a tool could not run. About 35 minutes on the 2-core machine.
//
// The app runs with the embedded defaults (PGlite, local storage, development sign-in provider), patient records
// switched on (a directory), and the tests' protocol-faithful fakes for speech (Speechmatics batch) and the
// language model (OpenAI-compatible), so a transcript and a letter exist within seconds. Both scanners go through
// a small forward proxy in this process that counts every request and answer, refuses any other destination, and
// keeps wapiti from signing out, deleting the account or deleting the seeded data (see wapitiGuard).
//
// Usage: npm run bench:security
//        node bench/security-scan.mjs --tools sqlmap --level 2 --risk 1 --report-dir /tmp/scan
// Options: --tools <sqlmap,wapiti> (both)  --level <sqlmap level 1–5> (2)  --risk <sqlmap risk 1–3> (1)
//          --only <text: only sqlmap targets whose route file or URL contains it>
//          --wapiti-scan-time <s of crawl> (300)  --wapiti-attack-time <s per module> (45)
//          --report-dir <dir>: keep sqlmap's logs and wapiti's log and JSON report there (the temp dir is removed)
//          --dry-run: send each sqlmap target once, without payloads, and print its status (checks the ids)
//          env BENCH_PORT (3700: app, +1 sign-in provider)
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { loadTestSupport } from "../scripts/fake-speech-bundle.mjs";
import { startEngineFakes } from "./support-engines.mjs";
import { until } from "./support-seed.mjs";
import { benchAppEnv, signIn, waitForApp } from "./support.mjs";

const { values: opts } = parseArgs({
  options: {
    tools: { type: "string", default: "sqlmap,wapiti" },
    level: { type: "string", default: "2" },
    risk: { type: "string", default: "1" },
    only: { type: "string" },
    "wapiti-scan-time": { type: "string", default: "300" },
    "wapiti-attack-time": { type: "string", default: "45" },
    "report-dir": { type: "string" },
    "dry-run": { type: "boolean", default: false },
  },
});
const TOOLS = new Set(opts.tools.split(",").filter(Boolean));
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PORT = Number(process.env.BENCH_PORT ?? 3700);
const APP = `http://localhost:${PORT}`;
/** The demo accounts the tools sign in as (the development provider's, app/services/dev-oidc/accounts.ts). */
const ACCOUNTS = { sqlmapApi: "sara-yilmaz", sqlmapScreens: "tim-schroeder", wapiti: "lena-wagner" };
const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------
// What sqlmap is pointed at. `*` marks each place it injects (sqlmap tests only the marked places then).

/** A JSON call: `body` is sent as JSON; `*` inside its strings and in the path marks injection points. */
const json = (method, url, body) => ({ kind: "json", method, url, data: body && JSON.stringify(body) });
/** A page with query parameters (a screen's loader). */
const page = (url) => ({ kind: "page", method: "GET", url });
/** A form post as the browser sends it (urlencoded). */
const form = (url, fields) => ({
  kind: "form",
  method: "POST",
  url,
  data: Object.entries(fields)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v).replace(/%2A/g, "*")}`)
    .join("&"),
});
const q = (value) => encodeURIComponent(value);

/**
 * Every route file app/routes/api.* (plus the live door's and the chat's own JSON calls): its requests with
 * the seeded ids. Calls that destroy what the later targets need are `last`.
 */
function apiTargets(ids) {
  /** Runs after everything else, in `order`: it deletes what other targets use. */
  const last = (order, target) => ({ ...target, last: order });
  return {
    "api.arztbrief.$": [
      json("GET", `/api/arztbrief/${ids.letterParam}*`),
      json("PUT", `/api/arztbrief/${ids.letterParam}`, { content: "Anamnese: Husten seit drei Tagen.*" }),
    ],
    "api.arztbriefe": [json("GET", "/api/arztbriefe?language=de*")],
    "api.audio-playback.$": [json("GET", `/api/audio-playback/${ids.recordingKey}*`)],
    "api.chat-request": [
      json("POST", "/api/chat-request", {
        messages: [{ role: "user*", content: "Was ist NYHA II?*" }],
        language: "de-DE*",
      }),
    ],
    "api.confirm-realtime-audio": [json("POST", "/api/confirm-realtime-audio", { key: `${ids.liveAudioKey}*` })],
    "api.delete-all": [
      last(
        9,
        json("POST", "/api/delete-all", {
          s3_key: `${ids.recordingKey}*`,
          transcript_key: `${ids.transcriptKey}*`,
          arztbrief_key: `${ids.letterKey}*`,
        }),
      ),
    ],
    "api.delete-arztbrief": [last(6, json("POST", "/api/delete-arztbrief", { key: `${ids.letterKey}*` }))],
    "api.delete-transcript": [
      last(7, json("POST", "/api/delete-transcript", { transcript_key: `${ids.transcriptKey}*` })),
    ],
    "api.extract-mfiles-pdf-context": [json("POST", "/api/extract-mfiles-pdf-context", { patient_id: "P-1001*" })],
    "api.extract-pdf-from-s3": [json("POST", "/api/extract-pdf-from-s3", { s3_keys: [`${ids.pdfKey}*`] })],
    "api.files": [json("GET", "/api/files?language=de*")],
    "api.force-cleanup": [last(8, json("POST", "/api/force-cleanup", { s3_key: `${ids.recordingKey}*` }))],
    "api.get-pdf-upload-urls": [json("POST", "/api/get-pdf-upload-urls", { filenames: ["Befund.pdf*"] })],
    "api.get-upload-url": [
      json("POST", "/api/get-upload-url", {
        file_name: "Visite.wav*",
        file_type: "audio/wav*",
        language_code: "de*",
        additional_context: "Vorbefund*",
      }),
      // The live recorder's variant: a slot for the audio of a saved live transcript.
      json("POST", "/api/get-upload-url", {
        file_name: "live.wav*",
        file_type: "audio/wav*",
        specific_key: `${ids.liveAudioKey}*`,
      }),
    ],
    "api.medical-letter-v2": [
      json("POST", "/api/medical-letter-v2", {
        source_key: `${ids.recordingKey}*`,
        transcript_data: "x*",
        original_filename: "Visite.wav*",
        metadata: { template_id: `${ids.templateId}*` },
      }),
    ],
    "api.prompts.$id": [last(1, json("DELETE", `/api/prompts/${ids.promptId}*`))],
    "api.prompts": [
      json("GET", "/api/prompts?language=de*"),
      json("POST", "/api/prompts", { title: "Kürzer*", prompt_text: "Bitte kürzer fassen.*" }),
    ],
    "api.refine-arztbrief-bulk": [
      json("POST", "/api/refine-arztbrief-bulk", {
        arztbrief_content: {
          structured_output: [{ Anamnese: "Husten seit drei Tagen.*" }, { Befund: "Unauffällig.*" }],
        },
        query: "kürzer*",
        language_code: "de-DE*",
        transcript_data: "Husten*",
      }),
    ],
    "api.refine-arztbrief-structured": [
      json("POST", "/api/refine-arztbrief-structured", {
        arztbrief_text: "Anamnese: Husten.*",
        query: "kürzer*",
        language_code: "de-DE*",
        section_context: "Anamnese*",
        transcript_data: "Husten*",
      }),
    ],
    "api.rename-file": [
      json("POST", "/api/rename-file", { s3_key: `${ids.recordingKey}*`, display_name: "Visite Frau B*" }),
    ],
    "api.save-realtime-transcript": [json("POST", "/api/save-realtime-transcript", livePayload({ marked: true }))],
    "api.structure.custom-template": [
      json("POST", "/api/structure/custom-template", {
        template_id: "sqlmap-vorlage*",
        custom_name: "Sqlmap Vorlage*",
        language_code: "de-DE*",
        structure_elements: [{ name: "Befund*", description: "Befund*" }],
        prompt: "Kurz.*",
      }),
      last(
        2,
        json("DELETE", `/api/structure/custom-template?template_id=${q(ids.spareTemplateId)}*&language_code=de-DE*`),
      ),
    ],
    "api.structure.repository": [json("GET", "/api/structure/repository?language=de*")],
    "api.structure.templates": [json("GET", "/api/structure/templates?language=de*")],
    "api.structure.user": [
      json("GET", `/api/structure/user?template=${q(ids.structureTemplateId)}*&language=de*`),
      json("PUT", `/api/structure/user?template=${q(ids.structureTemplateId)}*&language=de*`, {
        structure: [{ name: "Befund*", description: "Befund*" }],
        prompt: "Kurz.*",
      }),
    ],
    "api.structure.user_.add-access": [
      json("POST", "/api/structure/user/add-access", { template_id: "entlassbrief*", language_code: "de-DE*" }),
    ],
    "api.structure.user_.rag-permission": [
      json("GET", "/api/structure/user/rag-permission?language=de*"),
      json("POST", "/api/structure/user/rag-permission", { rag_agreed: true, user_id: "x*" }),
    ],
    "api.structure.user_.remove-access": [
      json("POST", "/api/structure/user/remove-access", { template_id: "entlassbrief*", language_code: "de-DE*" }),
    ],
    "api.structure.user_.reset": [json("POST", "/api/structure/user/reset?template=entlassbrief*&language=de*")],
    "api.transcribe_v2": [
      json("POST", "/api/transcribe_v2", {
        s3_key: `${ids.recordingKey}*`,
        metadata: { display_name: "Visite*", language_code: "de*", template_id: "default*", tags: ["kardio*"] },
      }),
    ],
    "api.transcribe_v2_.$job.status": [json("GET", `/api/transcribe_v2/${q(ids.jobName)}*/status`)],
    "api.transcript_v2.$": [json("GET", `/api/transcript_v2/${ids.transcriptParam}*`)],
    "api.update-file-metadata": [
      json("POST", "/api/update-file-metadata", {
        s3_key: `${ids.recordingKey}*`,
        metadata: { display_name: "Visite*", template_id: "default*", tags: ["kardio*"] },
      }),
    ],
    "api.update-file-tags": [
      json("POST", "/api/update-file-tags", {
        s3_key: `${ids.recordingKey}*`,
        tags: ["kardio*", "nachsorge*"],
        update_all_related: true,
      }),
    ],
    "api.upload-parts.abort": [last(3, json("POST", "/api/upload-parts/abort", { key: `${ids.multipartKey}*` }))],
    "api.upload-parts.complete": [json("POST", "/api/upload-parts/complete", { key: `${ids.multipartKey}*` })],
    "api.upload-parts.start": [
      json("POST", "/api/upload-parts/start", {
        file_name: "Lang.wav*",
        file_type: "audio/wav*",
        file_size: 6 * 1024 * 1024,
        language_code: "de*",
        additional_context: "Vorbefund*",
      }),
    ],
    "api.upload-parts.status": [json("POST", "/api/upload-parts/status", { key: `${ids.multipartKey}*` })],
    "api.upload-parts.urls": [
      json("POST", "/api/upload-parts/urls", { key: `${ids.multipartKey}*`, part_numbers: [1, 2] }),
    ],
    "live.sessions": [json("POST", "/live/sessions", { kind: "recording*", language: "de*" })],
    "live.sessions.$": [
      json("GET", `/live/sessions/${ids.liveSessionId}*`),
      last(4, json("POST", `/live/sessions/${ids.liveSessionId}*/discard`)),
    ],
  };
}

/** A live recording's save payload (SPEC §3) as the recorder sends it; `marked`: with sqlmap's `*` marks. */
function livePayload({ marked = false } = {}) {
  const m = marked ? "*" : "";
  const word = (content, start, speaker) => ({
    type: "word",
    start_time: start,
    end_time: start + 0.4,
    alternatives: [{ content, speaker, confidence: 0.9 }],
  });
  return {
    transcript_data: {
      results: [word(`Guten${m}`, 0, `S1${m}`), word("Tag", 0.5, "S1"), word("Schwindel", 1.2, "S2")],
      job: { started_at: "2025-05-12T08:15:00.000Z", data_name: `live${m}`, language: `de${m}`, duration: 2 },
    },
    display_name: `Live Visite${m}`,
    language_code: `de-DE${m}`,
    duration: 2,
    metadata: { template_id: `default${m}`, tags: `["Kardio"]${m}`, transcription_mode: `transcript${m}` },
    created_via: `realtime${m}`,
    additional_context: `Vorbefund${m}`,
    original_mime_type: `audio/wav${m}`,
  };
}

/** API routes sqlmap is not pointed at, and why. */
const API_NOT_SCANNED = {
  "api.$": "the catch-all: a JSON 404 for every unknown path before anything is read",
  "api.health": "admin only (the scanned clinician gets 403 before any input is read); covered by admin-access tests",
  "api.usage-dashboard": "admin only (403 for the clinician before any input is read)",
  "api.speechmatics-jwt": "takes no input (no body, no parameters): the token is minted for the session's user alone",
};

/** The screens' query parameters and the forms' fields. */
function screenTargets(ids) {
  const rec = q(ids.recordingKey);
  return {
    "_app._index": [
      page(`/?play=${rec}*`),
      page(`/?edit=${rec}*`),
      page(`/?delete=${rec}*`),
      page("/?tab=record*"),
      form("/?index", { intent: "rename", key: `${ids.recordingKey}*`, displayName: "Visite Frau B*" }),
      form("/?index", { intent: "add-tag", key: ids.recordingKey, tag: "verlauf*" }),
      form("/?index", { intent: "remove-tag", key: ids.recordingKey, tag: "verlauf*" }),
      form("/?index", { intent: "transcribe*", key: `${ids.recordingKey}*` }),
    ],
    "_app.arztbriefe": [page(`/arztbriefe?delete=${q(ids.letterKey)}*`)],
    "_app.arztbriefe.$": [
      page(`/arztbriefe/${ids.letterParam}?versions=1*&compare=1*`),
      page(`/arztbriefe/${ids.letterParam}?proposal=00000000-0000-4000-8000-000000000000*`),
      form(`/arztbriefe/${ids.letterParam}`, {
        intent: "save",
        title: "Anamnese*",
        text: "Husten seit drei Tagen.*",
        base_version: "", // no conflict check: other targets add versions meanwhile
      }),
      form(`/arztbriefe/${ids.letterParam}`, { intent: "savePrompt", title: "Kurz*", promptText: "Kürzer bitte.*" }),
      form(`/arztbriefe/${ids.letterParam}`, { intent: "restore", version: "1*" }),
    ],
    "_app.chat": [form("/chat", { intent: "send", question: "Was bedeutet NYHA II?*" })],
    "_app.settings": [
      page(`/settings?language=de-DE*&open=${q(ids.templateId)}*`),
      form("/settings", {
        intent: "structure",
        templateId: `${ids.structureTemplateId}*`,
        language: "de-DE*",
        "elements[0].name": "Befund*",
        "elements[0].description": "Befund*",
        prompt: "Kurz.*",
      }),
    ],
    "_app.settings.describe.$templateId.$elementId": [
      form(`/settings/describe/${q(ids.templateId)}/${q(ids.elementId)}?language=de-DE`, {
        description: "Befund im Detail*",
      }),
    ],
    "_app.settings.new": [
      form("/settings/new?language=de-DE", {
        name: "Neue Vorlage*",
        "elements[0].name": "Befund*",
        "elements[0].description": "Befund*",
        prompt: "Kurz.*",
      }),
    ],
    "_app.settings.repository": [
      page("/settings/repository?language=de-DE*&q=kardio*"),
      form("/settings/repository?language=de-DE", { templateId: "entlassbrief*" }),
    ],
    "_app.transcriptions": [form("/transcriptions", { intent: "createLetter", key: `${ids.recordingKey}*` })],
    "_app.transcriptions.$": [page(`/transcriptions/${ids.transcriptParam}?highlight=1*`)],
    "_app.arztbriefe.redo.$": [form(`/arztbriefe/redo/${ids.letterParam}`, { templateId: "kurzbrief*" })],
  };
}

// ---------------------------------------------------------------------------------------------------------
// The counting proxy: both tools send every request through it.

/**
 * `proxy.guard(url, form)` may name a reason to answer 403 without forwarding (`form`: the fields of an urlencoded
 * POST, else null). wapiti 3.0.4's own `-x` exclusions crash on Python 3.11 ("global flags not at the start of
 * the expression"), and its crawler submits every form it finds with the values it found, so what must not happen
 * during the scan is kept from happening here.
 */
function startCountingProxy(allowedOrigins) {
  const counts = { requests: 0, byStatus: new Map(), serverErrors: [], failed: [], refused: 0, blocked: new Map() };
  const state = { guard: undefined };
  const proxyAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const server = http.createServer(async (req, res) => {
    let target;
    try {
      target = new URL(req.url);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (!allowedOrigins.includes(target.origin)) {
      counts.refused++;
      res.writeHead(502, { "content-type": "text/plain" }).end("destination not allowed by the bench proxy");
      return;
    }
    let body;
    if (state.guard) {
      let form = null;
      if (req.method === "POST" && /urlencoded/i.test(req.headers["content-type"] ?? "")) {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        body = Buffer.concat(chunks);
        form = new URLSearchParams(body.toString("utf8"));
      }
      const reason = state.guard(target, form);
      if (reason) {
        const key = `${req.method} ${target.pathname} (${reason})`;
        counts.blocked.set(key, (counts.blocked.get(key) ?? 0) + 1);
        res.writeHead(403, { "content-type": "text/plain" }).end(`excluded from the scan by the bench: ${reason}`);
        return;
      }
    }
    counts.requests++;
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    if (body) headers["content-length"] = String(body.length);
    const upstream = http.request(target, { method: req.method, headers, agent: proxyAgent }, (answer) => {
      const status = answer.statusCode ?? 0;
      counts.byStatus.set(status, (counts.byStatus.get(status) ?? 0) + 1);
      if (status >= 500) counts.serverErrors.push(`${req.method} ${target.pathname} → ${status}`);
      res.writeHead(status, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.setTimeout(60_000, () => upstream.destroy(new Error("upstream timeout")));
    upstream.on("error", (error) => {
      counts.byStatus.set("error", (counts.byStatus.get("error") ?? 0) + 1);
      counts.failed.push(`${req.method} ${target.pathname}: ${error.code ?? error.message}`);
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    if (body) upstream.end(body);
    else req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        counts,
        set guard(fn) {
          state.guard = fn;
        },
        snapshot: () => ({ requests: counts.requests, byStatus: new Map(counts.byStatus) }),
        close: () =>
          new Promise((done) => {
            proxyAgent.destroy();
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    }),
  );
}

/** Requests and statuses between two snapshots of the proxy's counts. */
function delta(before, after) {
  const byStatus = new Map();
  for (const [status, n] of after.byStatus) {
    const d = n - (before.byStatus.get(status) ?? 0);
    if (d) byStatus.set(status, d);
  }
  return { requests: after.requests - before.requests, byStatus };
}

const statusLine = (byStatus) =>
  [...byStatus]
    .sort(([a], [b]) => String(a).localeCompare(String(b)))
    .map(([status, n]) => `${status}×${n}`)
    .join(" ");

// ---------------------------------------------------------------------------------------------------------
// wapiti's SSRF module needs an endpoint that records whether the target called it; this is a local one
// (wapiti's default is on the Internet). It answers get_ssrf.php as wapiti expects.

function startSsrfEndpoint() {
  const hits = new Map(); // session id → { path id → { hex param → [call] } }
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/get_ssrf.php") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(hits.get(url.searchParams.get("id")) ?? {}));
      return;
    }
    const match = /^\/ssrf\/([^/]+)\/([^/]+)\/([^/]+)\//.exec(url.pathname);
    if (match) {
      const [, session, pathId, hexParam] = match;
      const bySession = hits.get(session) ?? {};
      hits.set(session, bySession);
      bySession[pathId] ??= {};
      (bySession[pathId][hexParam] ??= []).push({
        url: req.url,
        date: new Date().toISOString(),
        ip: req.socket.remoteAddress,
        method: req.method,
        size: Number(req.headers["content-length"] ?? 0),
      });
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/`,
        calls: () => [...hits.values()].flatMap((s) => Object.values(s).flatMap((p) => Object.values(p).flat())),
        close: () => new Promise((done) => server.close(() => done())),
      }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------------
// The app, its fakes, and the data the scanners work on.

let current; // the tool's child process, killed on cleanup

function startApp(dataDir, env) {
  const child = spawn(process.execPath, ["server.mjs"], {
    cwd: ROOT,
    env: benchAppEnv({ port: PORT, dataDir, env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const errors = [];
  const keep = (chunk) => {
    log = (log + chunk).slice(-20_000);
    for (const line of String(chunk).split("\n"))
      if (/\[error\]|unexpected failure|Unhandled|TypeError|ReferenceError/.test(line)) errors.push(line.slice(0, 300));
  };
  child.stdout.setEncoding("utf8").on("data", keep);
  child.stderr.setEncoding("utf8").on("data", keep);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { child, exited, log: () => log, errors };
}

/** Others may be rebuilding the shared tree: start only from a build that has not changed for 20 s. */
async function waitForQuietBuild() {
  const files = ["build/index.js", "build/version.txt"].map((f) => path.join(ROOT, f));
  for (let waited = 0; waited < 600_000; waited += 2_000) {
    const newest = Math.max(...files.map((f) => fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? Infinity));
    if (Date.now() - newest > 20_000) return;
    await sleep(2_000);
  }
  throw new Error("build/ kept changing for 10 minutes");
}

/** support.mjs's 30 s wait, repeated: on a shared, loaded machine the first boot (migrations) takes longer. */
async function waitForBusyApp(app) {
  for (let attempt = 1; ; attempt++) {
    if (app.child.exitCode !== null) throw new Error(`the app exited while starting:\n${app.log()}`);
    try {
      return await waitForApp(APP);
    } catch (error) {
      if (attempt === 6) throw error;
    }
  }
}

async function stopApp(app) {
  if (app.child.exitCode !== null || app.child.signalCode !== null) return;
  app.child.kill("SIGTERM");
  const timer = setTimeout(() => app.child.kill("SIGKILL"), 20_000);
  await app.exited;
  clearTimeout(timer);
}

const TEXT =
  "Guten Tag, Frau Becker. Seit wann haben Sie die Atemnot? Seit etwa zwei Wochen, vor allem beim Treppensteigen. " +
  "Der Blutdruck liegt bei hundertvierzig zu neunzig. Wir machen ein Belastungs-EKG und sehen uns in einer Woche wieder.";

/** The session cookie of a demo account; sign-in's emptied helper cookies (oauth state, return path) left out. */
async function sessionOf(account) {
  const cookie = await signIn(APP, account);
  return cookie
    .split("; ")
    .filter((pair) => !pair.endsWith("="))
    .join("; ");
}

/** Ten seconds of German speech (espeak-ng), 16 kHz mono 16-bit WAV. */
async function makeSpeech(dir) {
  const raw = path.join(dir, "espeak.wav");
  const out = path.join(dir, "speech.wav");
  await run("espeak-ng", ["-v", "de", "-w", raw, "--", TEXT]);
  await run("sox", [raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out, "trim", "0", "10"]);
  return fs.readFileSync(out);
}

function apiClient(cookie) {
  const call = async (method, p, body, { ok = true } = {}) => {
    const response = await fetch(`${APP}${p}`, {
      method,
      headers: { cookie, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (ok && !response.ok) throw new Error(`${method} ${p} → ${response.status} ${text.slice(0, 300)}`);
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      throw new Error(`${method} ${p} → ${response.status}, not JSON: ${text.slice(0, 300)}`);
    }
  };
  return {
    get: (p) => call("GET", p),
    post: (p, body) => call("POST", p, body ?? {}),
    put: (p, body) => call("PUT", p, body),
  };
}

/** One of everything the scanners should find with real ids: recording, transcript, letter, template, … */
async function seed(cookie, { wav, pdf }) {
  const api = apiClient(cookie);
  const slot = await api.post("/api/get-upload-url", {
    file_name: "Visite Becker.wav",
    file_type: "audio/wav",
    language_code: "de",
    additional_context: "Vorbefund: Belastungsdyspnoe.",
  });
  const put = await fetch(slot.url, { method: "PUT", headers: { "content-type": "audio/wav" }, body: wav });
  if (!put.ok) throw new Error(`PUT recording → ${put.status}`);
  await api.post("/api/update-file-metadata", { s3_key: slot.key, metadata: {} });
  await api.post("/api/rename-file", { s3_key: slot.key, display_name: "Visite Becker" });
  await api.post("/api/update-file-tags", { s3_key: slot.key, tags: ["kardio"], update_all_related: true });
  const { job_name: jobName } = await api.post("/api/transcribe_v2", { s3_key: slot.key });
  const status = await until("transcript", async () => {
    const s = await api.get(`/api/transcribe_v2/${encodeURIComponent(jobName)}/status`);
    if (s.status === "failed") throw new Error(`transcription failed: ${JSON.stringify(s)}`);
    return s.status === "completed" && s;
  });
  const transcriptKey = status.transcript_key;

  const templateBody = (id, name) => ({
    template_id: id,
    custom_name: name,
    language_code: "de-DE",
    structure_elements: [
      { name: "Anamnese", description: "Beschwerden und Verlauf" },
      { name: "Befund", description: "Untersuchungsbefund" },
    ],
    prompt: "Knapp und sachlich.",
  });
  const { template_id: templateId } = await api.post(
    "/api/structure/custom-template",
    templateBody("kardio-kurz", "Kardiologie kurz"),
  );
  const { template_id: structureTemplateId } = await api.post(
    "/api/structure/custom-template",
    templateBody("struktur", "Struktur"),
  );
  const { template_id: spareTemplateId } = await api.post(
    "/api/structure/custom-template",
    templateBody("zum-loeschen", "Zum Löschen"),
  );
  const structure = await api.get(`/api/structure/user?template=${encodeURIComponent(templateId)}&language=de`);
  const elementId = structure.elements.find((e) => e.id)?.id ?? structure.elements[0]?.name;

  // Idempotent: asked again, the call answers with the letter's key once the job has written it.
  const letterRequest = {
    source_key: slot.key,
    transcript_data: "",
    original_filename: "Visite Becker.wav",
    metadata: { template_id: templateId },
  };
  const created = await until("letter", async () => {
    const answer = await api.post("/api/medical-letter-v2", letterRequest);
    return answer.status === "completed" && answer.key && answer;
  });
  const letterKey = created.key;
  const letterParam = letterKey.replace(/^arztbriefe\//, "");
  const { prompt } = await api.post("/api/prompts", { title: "Kürzer", prompt_text: "Bitte kürzer fassen." });

  const pdfs = await api.post("/api/get-pdf-upload-urls", { filenames: ["Befund.pdf"] });
  const [{ upload_url: pdfUrl, s3_key: pdfKey }] = pdfs.upload_urls;
  const pdfPut = await fetch(pdfUrl, { method: "PUT", headers: { "content-type": "application/pdf" }, body: pdf });
  if (!pdfPut.ok) throw new Error(`PUT pdf → ${pdfPut.status}`);
  const multipart = await api.post("/api/upload-parts/start", {
    file_name: "Lang.wav",
    file_type: "audio/wav",
    file_size: 6 * 1024 * 1024,
    language_code: "de",
  });
  // A saved live recording with its audio uploaded afterwards, as the recorder does it.
  const saved = await api.post("/api/save-realtime-transcript", livePayload());
  const liveSlot = await api.post("/api/get-upload-url", {
    file_name: "live.wav",
    file_type: "audio/wav",
    specific_key: saved.audio_key,
  });
  const livePut = await fetch(liveSlot.url, { method: "PUT", headers: { "content-type": "audio/wav" }, body: wav });
  if (!livePut.ok) throw new Error(`PUT live audio → ${livePut.status}`);
  await api.post("/api/confirm-realtime-audio", { key: saved.audio_key });
  const live = await fetch(`${APP}/live/sessions`, {
    method: "POST",
    headers: { cookie, "content-type": "application/json", origin: APP, "sec-fetch-site": "same-origin" },
    body: JSON.stringify({ kind: "recording", language: "de" }),
  }).then((r) => r.json());
  return {
    recordingKey: slot.key,
    jobName,
    transcriptKey,
    transcriptParam: transcriptKey.replace(/^transcripts\//, ""),
    letterKey,
    letterParam,
    templateId,
    structureTemplateId,
    spareTemplateId,
    liveAudioKey: saved.audio_key,
    elementId,
    promptId: prompt.id,
    pdfKey,
    multipartKey: multipart.key,
    liveSessionId: live.id ?? live.session_id,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The tools.

async function toolVersion(command, args) {
  try {
    const { stdout, stderr } = await run(command, args, { timeout: 60_000 });
    return `${stdout}\n${stderr}`;
  } catch (error) {
    throw new Error(`${command} could not run: ${error.message}`, { cause: error });
  }
}

/** Runs a tool to its end (or `timeoutMs`), keeping its output; the child is killed on cleanup. */
function runTool(command, args, { timeoutMs, logFile }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group, so that a kill reaches what it started
      env: { ...process.env, TERM: "dumb" },
    });
    current = child;
    let output = "";
    const keep = (chunk) => {
      output += chunk;
      if (logFile) fs.appendFileSync(logFile, chunk);
    };
    child.stdout.setEncoding("utf8").on("data", keep);
    child.stderr.setEncoding("utf8").on("data", keep);
    const timer = setTimeout(() => killGroup(child), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: -1, output: `${output}\n${error.message}`, timedOut: false });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      current = undefined;
      resolve({ code: code ?? -1, signal, output, timedOut: signal === "SIGKILL" });
    });
  });
}

function killGroup(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

/**
 * What sqlmap said. `confirmed`: injection points it reported ("sqlmap identified the following injection
 * point(s)"). `rejected`: parameters it first thought injectable ("appears to be … injectable") and then refuted
 * itself ("false positive or unexploitable injection point detected") — typical of answers that change on every
 * request. `heuristic`: its quick pre-checks (SQL, XSS, file inclusion) that said "might be".
 */
function parseSqlmap(output) {
  const lines = output.split("\n");
  const confirmed = [];
  const tentative = new Map();
  const rejected = [];
  const heuristic = [];
  let lastTentative;
  let inReport = false;
  for (const line of lines) {
    const appears = /parameter '([^']+)' (?:appears|seems) to be '([^']+)' injectable/i.exec(line);
    if (appears) {
      tentative.set(appears[1], appears[2]);
      lastTentative = appears[1];
    }
    if (/false positive or unexploitable injection point detected/i.test(line) && lastTentative) {
      rejected.push({ parameter: lastTentative, technique: tentative.get(lastTentative) });
      tentative.delete(lastTentative);
      lastTentative = undefined;
    }
    const might =
      /heuristic \((basic|XSS|FI)\) test shows that (?:\S+ )?parameter '([^']+)' might be (?:injectable|vulnerable)/i.exec(
        line,
      );
    if (might) heuristic.push({ parameter: might[2], test: might[1] });
    if (/identified the following injection point/i.test(line)) inReport = true;
    const point = inReport && /^Parameter: (.+?) \(/.exec(line.trim());
    if (point) confirmed.push({ parameter: point[1], line: line.trim() });
  }
  // A tentative point that was neither refuted nor reported: sqlmap stopped in between (time-out); count it.
  for (const [parameter, technique] of tentative)
    if (!confirmed.some((c) => c.parameter === parameter))
      confirmed.push({ parameter, line: `unrefuted: ${technique}` });
  const codes = /HTTP error codes detected during run:\s*\n?(.*)/i.exec(output)?.[1]?.trim() ?? "";
  const notInjectable = /all tested parameters do not appear to be injectable/i.test(output);
  const critical = lines.filter((l) => /\[CRITICAL\]/.test(l)).map((l) => l.replace(/^.*\[CRITICAL\]\s*/, "").trim());
  return { confirmed, rejected, heuristic, codes, notInjectable, critical };
}

async function runSqlmap({ targets, proxy, work, reportDir }) {
  const results = [];
  const outputDir = path.join(work, "sqlmap");
  fs.mkdirSync(outputDir, { recursive: true });
  for (const [index, target] of targets.entries()) {
    const headers = [`Origin: ${APP}`, "Sec-Fetch-Site: same-origin"];
    if (target.kind === "json") headers.push("Content-Type: application/json", "Accept: application/json");
    const args = [
      "-u",
      `${APP}${target.url}`,
      "--method",
      target.method,
      ...(target.data ? ["--data", target.data] : []),
      // A form answers with a redirect to its page; following it renders that page (with everything the scan has
      // created so far) for every payload. The action's own answer (302, 400, 404, 500) is what tells.
      ...(target.kind === "form" ? ["--ignore-redirects"] : []),
      "--cookie",
      target.cookie,
      "--headers",
      headers.join("\n"),
      "--batch",
      `--level=${opts.level}`,
      `--risk=${opts.risk}`,
      "--dbms=PostgreSQL",
      "--skip-waf",
      // 404 is the app's ordinary answer to an id that is not (or no longer) the caller's: without this, sqlmap
      // gives up on a target whose first request used up what it names (an extracted PDF, a deleted letter).
      "--ignore-code=404",
      "--flush-session",
      "--disable-coloring",
      "--timeout=30",
      "--retries=1",
      `--proxy=${proxy.url}`,
      `--output-dir=${outputDir}`,
    ];
    const before = proxy.snapshot();
    const started = performance.now();
    const logFile = reportDir ? path.join(reportDir, `sqlmap-${String(index + 1).padStart(2, "0")}.log`) : undefined;
    if (logFile) fs.writeFileSync(logFile, `$ sqlmap ${args.map((a) => JSON.stringify(a)).join(" ")}\n\n`);
    const result = await runTool("sqlmap", args, { timeoutMs: 10 * 60_000, logFile });
    const seconds = (performance.now() - started) / 1000;
    const counted = delta(before, proxy.snapshot());
    const parsed = parseSqlmap(result.output);
    const skipped = /skipping to the next target/i.test(result.output) && !parsed.notInjectable;
    const ran = result.code === 0 && counted.requests > 0 && !skipped;
    results.push({ target, seconds, ...counted, ...parsed, ran, code: result.code, timedOut: result.timedOut });
    const notes = [
      ...parsed.rejected.map((r) => `'${r.parameter}' first looked injectable (${r.technique}), refuted by sqlmap`),
      ...parsed.heuristic.map((h) => `heuristic ${h.test} check on '${h.parameter}' said "might be"`),
    ];
    const verdict = parsed.confirmed.length
      ? `INJECTABLE: ${parsed.confirmed.map((f) => `'${f.parameter}' (${f.line})`).join(", ")}`
      : !ran
        ? `did not run (exit ${result.code}${result.timedOut ? ", timed out" : ""})`
        : parsed.notInjectable
          ? "not injectable"
          : "no injection point reported";
    console.log(
      `  [${index + 1}/${targets.length}] ${target.method} ${target.url.slice(0, 90)}  ` +
        `${counted.requests} req (${statusLine(counted.byStatus)}) ${seconds.toFixed(0)} s — ${verdict}` +
        (notes.length ? `; ${notes.join("; ")}` : ""),
    );
  }
  return results;
}

/**
 * What wapiti may not do: sign out (the scan's session would end), delete the account, leave for the provider's
 * sign-in, and — while crawling, when it posts every form with the values it found — delete or reset the seeded
 * recording, transcript, letter or template, which would leave the rest of the scan nothing to attack. A form
 * wapiti has put a payload into does not carry the seeded id unchanged, so every attack still passes.
 */
function wapitiGuard(ids) {
  const seeded = [ids.recordingKey, ids.letterKey, ids.letterParam, ids.transcriptKey, ids.transcriptParam];
  const isSeeded = (value) => seeded.some((id) => value === id || value.endsWith(`/${id}`));
  return (url, form) => {
    if (/^\/logout(\/|$)/.test(url.pathname)) return "sign-out";
    if (/^\/settings\/account(\/|$)/.test(url.pathname)) return "account deletion";
    if (/^\/auth\//.test(url.pathname)) return "sign-in at the provider";
    if (/^\/settings\/remove\//.test(url.pathname) && url.pathname.endsWith(`/${ids.templateId}`) && form)
      return "keeps the seeded template";
    const path = decodeURIComponent(url.pathname);
    if (form && ["delete", "reset"].includes(form.get("intent") ?? "") && [path, ...form.values()].some(isSeeded))
      return "keeps the seeded data";
    return null;
  };
}

async function runWapiti({ ids, cookie, proxy, ssrf, work, reportDir }) {
  const cookieFile = path.join(work, "wapiti-cookies.json");
  const jar = {};
  for (const pair of cookie.split("; ")) {
    const [name, ...rest] = pair.split("=");
    jar[name] = { value: rest.join("="), version: 0, expires: null, secure: false, port: null };
  }
  // wapiti keys cookies of a dot-less host under ".<host>.local" (its jsoncookie module).
  fs.writeFileSync(cookieFile, JSON.stringify({ ".localhost.local": { "/": jar } }));
  const report = path.join(work, "wapiti.json");
  const modules =
    "xss,permanentxss,sql,blindsql,exec,file,crlf,redirect,ssrf,csrf,backup,htaccess,methods,cookieflags,csp,http_headers";
  const args = [
    "-u",
    `${APP}/`,
    "--scope",
    "folder",
    "-c",
    cookieFile,
    "-m",
    modules,
    "--max-scan-time",
    opts["wapiti-scan-time"],
    "--max-attack-time",
    opts["wapiti-attack-time"],
    "--flush-session",
    "--store-session",
    path.join(work, "wapiti-session"),
    "--store-config",
    path.join(work, "wapiti-config"),
    "--endpoint",
    ssrf.url,
    "-p",
    `${proxy.url}/`,
    // Debian's wapiti announces brotli without a brotli decoder: it would see compressed bytes and find no links.
    "-H",
    "Accept-Encoding: gzip, deflate",
    "-t",
    "30",
    "-f",
    "json",
    "-o",
    report,
    "--no-bugreport",
    "-v",
    "1",
  ];
  proxy.guard = wapitiGuard(ids);
  const logFile = reportDir ? path.join(reportDir, "wapiti.log") : undefined;
  if (logFile) fs.writeFileSync(logFile, `$ wapiti ${args.map((a) => JSON.stringify(a)).join(" ")}\n\n`);
  const before = proxy.snapshot();
  const started = performance.now();
  const budget = (Number(opts["wapiti-scan-time"]) + 16 * Number(opts["wapiti-attack-time"]) + 300) * 1000;
  const result = await runTool("wapiti", args, { timeoutMs: budget, logFile });
  const seconds = (performance.now() - started) / 1000;
  const counted = delta(before, proxy.snapshot());
  proxy.guard = undefined;
  if (!fs.existsSync(report)) return { ran: false, seconds, ...counted, code: result.code, output: result.output };
  if (reportDir) fs.copyFileSync(report, path.join(reportDir, "wapiti.json"));
  const data = JSON.parse(fs.readFileSync(report, "utf8"));
  const findings = [];
  for (const section of ["vulnerabilities", "anomalies", "additionals"])
    for (const [category, list] of Object.entries(data[section] ?? {}))
      for (const item of list)
        findings.push({
          section,
          category,
          request: String(item.http_request ?? `${item.method} ${item.path}`).split("\n")[0],
          // Forms of one address differ by their intent field (urlencoded or multipart).
          intent: /(?:^|[&\n])intent=([^&\n]+)|name="intent"\r?\n\r?\n([^\r\n]+)/
            .exec(item.http_request ?? "")
            ?.slice(1)
            .find(Boolean),
          parameter: item.parameter,
          info: String(item.info ?? "").split("\n")[0],
          level: item.level,
        });
  const crawled = /(\d+) URLs? and forms? (?:have been|were) (?:found|crawled)/i.exec(result.output)?.[1];
  return {
    ran: true,
    seconds,
    ...counted,
    code: result.code,
    findings,
    infos: data.infos,
    crawled,
    output: result.output,
  };
}

// ---------------------------------------------------------------------------------------------------------

function routeIds(prefixes) {
  return fs
    .readdirSync(path.join(ROOT, "app/routes"))
    .map((name) => name.replace(/\.tsx?$/, ""))
    .filter((id) => prefixes.some((prefix) => id.startsWith(prefix)));
}

/**
 * The JSON calls run as one clinician and the screens as another: both doors share the per-user hourly limits
 * (uploads, chats, refinements, letters), and sqlmap's hundreds of requests on one door would leave the other
 * nothing but 429s.
 */
function sqlmapTargets(api1, screens1) {
  const api = apiTargets(api1.ids);
  const screens = screenTargets(screens1.ids);
  const unmapped = routeIds(["api."]).filter((id) => !(id in api) && !(id in API_NOT_SCANNED));
  for (const id of Object.keys(screens))
    if (!routeIds(["_app"]).includes(id)) throw new Error(`screen target ${id}: no such route in app/routes`);
  const all = [
    ...Object.entries(api).flatMap(([route, list]) => list.map((t) => ({ ...t, route, cookie: api1.cookie }))),
    ...Object.entries(screens).flatMap(([route, list]) => list.map((t) => ({ ...t, route, cookie: screens1.cookie }))),
  ].filter((t) => !opts.only || `${t.route} ${t.url}`.includes(opts.only));
  // What deletes the seeded data goes last.
  const destroying = all.filter((t) => t.last).sort((a, b) => a.last - b.last);
  return { targets: [...all.filter((t) => !t.last), ...destroying], unmapped };
}

/** Each target once as sqlmap's first request sends it (markers removed): the status shows the ids are right. */
async function dryRun(targets) {
  for (const target of targets) {
    const headers = { cookie: target.cookie, origin: APP, "sec-fetch-site": "same-origin" };
    if (target.data)
      headers["content-type"] = target.kind === "json" ? "application/json" : "application/x-www-form-urlencoded";
    const response = await fetch(`${APP}${target.url.replaceAll("*", "")}`, {
      method: target.method,
      headers,
      body: target.data?.replaceAll("*", ""),
      redirect: "manual",
    });
    const text = await response.text();
    console.log(
      `  ${response.status} ${target.method} ${target.url.replaceAll("*", "")}  ${text.slice(0, 120).replace(/\s+/g, " ")}`,
    );
  }
}

function printSqlmapSummary(results, unmapped, seconds) {
  const total = results.reduce((n, r) => n + r.requests, 0);
  const statuses = new Map();
  for (const r of results) for (const [s, n] of r.byStatus) statuses.set(s, (statuses.get(s) ?? 0) + n);
  const routes = new Set(results.map((r) => r.target.route)).size;
  const params = results.reduce((n, r) => n + (`${r.target.url}${r.target.data ?? ""}`.match(/\*/g)?.length ?? 0), 0);
  const kinds = ["json", "page", "form"].map((k) => `${k} ${results.filter((r) => r.target.kind === k).length}`);
  console.log(
    `\nsqlmap: ${results.length} targets (${kinds.join(", ")}) on ${routes} routes, ${params} injection points, ` +
      `${total} requests, ${(seconds / 60).toFixed(1)} min`,
  );
  console.log(`  answers: ${statusLine(statuses)}`);
  const notScanned = Object.entries(API_NOT_SCANNED).map(([id, why]) => `${id} (${why})`);
  console.log(`  API routes not scanned: ${notScanned.join("; ")}`);
  if (unmapped.length) console.log(`  API routes with no target yet (add them to apiTargets): ${unmapped.join(", ")}`);
  const failed = results.filter((r) => !r.ran);
  if (failed.length)
    console.log(`  did not run: ${failed.map((r) => `${r.target.method} ${r.target.url}`).join(", ")}`);
  const critical = [...new Set(results.flatMap((r) => r.critical))];
  if (critical.length) console.log(`  sqlmap's critical messages: ${critical.join(" | ")}`);
  const confirmed = results.flatMap((r) => r.confirmed.map((f) => ({ ...f, target: r.target })));
  console.log(`  injection points reported by sqlmap: ${confirmed.length}`);
  for (const f of confirmed) console.log(`    ${f.target.method} ${f.target.url} '${f.parameter}' — ${f.line}`);
  const rejected = results.flatMap((r) => r.rejected.map((f) => ({ ...f, target: r.target })));
  console.log(`  first thought injectable, then refuted by sqlmap's own false-positive check: ${rejected.length}`);
  for (const f of rejected) console.log(`    ${f.target.method} ${f.target.url} '${f.parameter}' (${f.technique})`);
  const heuristic = results.flatMap((r) => r.heuristic.map((f) => ({ ...f, target: r.target })));
  console.log(`  heuristic "might be" pre-checks: ${heuristic.length}`);
  for (const f of heuristic) console.log(`    ${f.target.method} ${f.target.url} '${f.parameter}' (${f.test})`);
}

function printWapitiSummary(result) {
  console.log(
    `\nwapiti: ${result.requests} requests, ${(result.seconds / 60).toFixed(1)} min${result.crawled ? `, ${result.crawled} URLs and forms crawled` : ""}`,
  );
  console.log(`  answers: ${statusLine(result.byStatus)}`);
  if (!result.ran) {
    console.log(`  wapiti did not write a report (exit ${result.code}):\n${result.output.slice(-3000)}`);
    return;
  }
  const byCategory = new Map();
  for (const f of result.findings) {
    const key = `${f.section}: ${f.category}`;
    byCategory.set(key, [...(byCategory.get(key) ?? []), f]);
  }
  if (!byCategory.size) console.log("  findings: none");
  for (const [category, list] of byCategory) {
    console.log(`  ${category} (${list.length})`);
    for (const f of list) {
      const where = `${f.request}${f.intent ? ` (intent=${decodeURIComponent(f.intent)})` : ""}`;
      console.log(`    ${where}${f.parameter ? ` [${f.parameter}]` : ""} — ${f.info}`);
    }
  }
}

async function main() {
  const started = performance.now();
  const versions = {};
  if (TOOLS.has("sqlmap")) versions.sqlmap = (await toolVersion("sqlmap", ["--version"])).split("\n")[0].trim();
  if (TOOLS.has("wapiti"))
    versions.wapiti =
      /Wapiti-[\d.]+/.exec(await toolVersion("wapiti", ["--version"]))?.[0] ?? "wapiti (version unknown)";
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-security-"));
  const reportDir = opts["report-dir"] && path.resolve(opts["report-dir"]);
  if (reportDir) fs.mkdirSync(reportDir, { recursive: true });
  let app, speech, llm, proxy, ssrf;
  let failed = false;
  const cleanup = async () => {
    killGroup(current);
    if (app) await stopApp(app).catch(() => undefined);
    await speech?.close().catch(() => undefined);
    await llm?.close().catch(() => undefined);
    await proxy?.close().catch(() => undefined);
    await ssrf?.close().catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  };
  const onSignal = (signal) => void cleanup().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const support = path.join(work, "support");
    const { germanTextPdf } = await loadTestSupport("pdf-fixtures", support);
    await waitForQuietBuild();
    const engines = await startEngineFakes(support);
    ({ speech, llm } = engines);
    // Patient records switched on (a directory of PDFs per patient id), so that the patient id reaches a lookup.
    const patients = path.join(work, "patient-records");
    fs.mkdirSync(path.join(patients, "P-1001"), { recursive: true });
    fs.writeFileSync(path.join(patients, "P-1001", "Befund.pdf"), Buffer.from(await germanTextPdf()));
    app = startApp(path.join(work, "data"), {
      DISABLE_MFILES: "0",
      PATIENT_RECORDS_DRIVER: "directory",
      PATIENT_RECORDS_DIR: patients,
      RATE_LIMIT_PATIENT_RECORDS_PER_HOUR: "100000",
      ...engines.env,
    });
    await waitForBusyApp(app);
    const inputs = { wav: await makeSpeech(work), pdf: Buffer.from(await germanTextPdf()) };
    ssrf = await startSsrfEndpoint();
    proxy = await startCountingProxy([new URL(APP).origin, new URL(ssrf.url).origin]);

    console.log(`security scan of ${APP}, ${new Date().toISOString()}`);
    console.log(`  ${Object.values(versions).join(", ")}; node ${process.version}; ${os.cpus().length} cores`);

    // Each tool scans as its own clinician with freshly seeded data: sqlmap's requests use up that user's
    // hourly upload and letter limits, and its last targets delete what it was given.
    let sqlmapResult;
    if (TOOLS.has("sqlmap")) {
      try {
        const clinician = async (account) => {
          const cookie = await sessionOf(account);
          return { cookie, ids: await seed(cookie, inputs) };
        };
        const { targets, unmapped } = sqlmapTargets(
          await clinician(ACCOUNTS.sqlmapApi),
          await clinician(ACCOUNTS.sqlmapScreens),
        );
        if (opts["dry-run"]) {
          await dryRun(targets);
          return;
        }
        console.log(
          `\nsqlmap --level=${opts.level} --risk=${opts.risk} --dbms=PostgreSQL, ${targets.length} targets ` +
            `(JSON calls as ${ACCOUNTS.sqlmapApi}, screens as ${ACCOUNTS.sqlmapScreens}):`,
        );
        const t0 = performance.now();
        const results = await runSqlmap({ targets, proxy, work, reportDir });
        sqlmapResult = { results, unmapped, seconds: (performance.now() - t0) / 1000 };
        if (!results.some((r) => r.ran)) failed = true;
      } catch (error) {
        console.error("sqlmap could not run:", error);
        failed = true;
      }
    }
    let wapitiResult;
    if (TOOLS.has("wapiti")) {
      try {
        const cookie = await sessionOf(ACCOUNTS.wapiti);
        const ids = await seed(cookie, inputs);
        console.log(
          `\nwapiti as ${ACCOUNTS.wapiti}: crawling and attacking ${APP}/ (at most ${opts["wapiti-scan-time"]} s of ` +
            `crawl, ${opts["wapiti-attack-time"]} s per module)…`,
        );
        wapitiResult = await runWapiti({ ids, cookie, proxy, ssrf, work, reportDir });
        if (!wapitiResult.ran) failed = true;
      } catch (error) {
        console.error("wapiti could not run:", error);
        failed = true;
      }
    }

    console.log(`\n=== Summary (${((performance.now() - started) / 60_000).toFixed(1)} min) ===`);
    if (sqlmapResult) printSqlmapSummary(sqlmapResult.results, sqlmapResult.unmapped, sqlmapResult.seconds);
    if (wapitiResult) printWapitiSummary(wapitiResult);
    if (ssrf.calls().length) console.log(`\nSSRF endpoint was called by the target: ${JSON.stringify(ssrf.calls())}`);
    if (proxy.counts.serverErrors.length) {
      const unique = [...new Set(proxy.counts.serverErrors)];
      console.log(`\n5xx answers (${proxy.counts.serverErrors.length}): ${unique.slice(0, 40).join("; ")}`);
    }
    if (proxy.counts.failed.length) {
      const unique = [...new Set(proxy.counts.failed)];
      console.log(`\nno answer (${proxy.counts.failed.length}): ${unique.slice(0, 20).join("; ")}`);
    }
    if (proxy.counts.blocked.size)
      console.log(`kept from the app by the bench (403, not forwarded): ${statusLine(proxy.counts.blocked)}`);
    if (proxy.counts.refused)
      console.log(`requests to other destinations refused by the proxy: ${proxy.counts.refused}`);
    // Remix's "no route matches" and "no action" answers reach handleError and are logged as errors.
    const routing = app.errors.filter((line) => /ErrorResponseImpl/.test(line));
    const other = [...new Set(app.errors.filter((line) => !/ErrorResponseImpl/.test(line)))];
    if (routing.length)
      console.log(`\napp log: ${routing.length} [error] lines for 404/405 answers (ErrorResponseImpl)`);
    if (other.length) {
      console.log(`app log: ${other.length} other error lines (first 20):`);
      for (const line of other.slice(0, 20)) console.log(`  ${line}`);
    }
  } catch (error) {
    console.error(error);
    if (app) console.error(app.log().slice(-4000));
    failed = true;
  } finally {
    await cleanup();
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
