import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { Request as UndiciRequest } from "undici";

// A local Speechmatics Batch API (v2) that behaves as PROTOCOLS.md §1 describes the real one. Reproduced
// ("Behaviours a faithful batch test server must reproduce", items 1–8):
// 1. POST /jobs (multipart: `config` JSON string + `data_file`) → 201 {"id"}. A missing or unparsable config,
//    a config without `type` or `transcription_config.language`, or an invalid field we know of (model,
//    operating_point, diarization, additional_vocab) → 400 {"code":400,"error":"Job rejected","detail"}.
//    No `data_file` and no `fetch_data.url` → 400 "Missing data_file". `?wait=&format=` on POST adds `status`
//    and, when done, the transcript under a key named after the format.
// 2. Status `running` → `done` (or `rejected` with `errors[]` in reject mode) after `pollsUntilDone` status
//    polls and `processingMs`; `deleted` after DELETE; `expireJob()` makes a job answer 410.
// 3. GET /jobs/{id}/transcript?format=json-v2|txt|srt: 404 until done, then the json-v2 shape (job and
//    metadata filled in from the job) or text.
// 4. `wait` on GET: answered at once with `wait=0`, otherwise held until the job finishes or the wait ends;
//    the default and every wait are capped by `maxWaitMs` (2 s) so no test waits longer.
// 5. DELETE of a running job without `force=true` → 423 "Resource Locked"; otherwise 200 and `deleted`.
// 6. Missing or wrong Bearer → 401 with nginx's HTML page (default) or the JSON body (`unauthorizedBody`);
//    `forbidden` → 403 "Entitlement check failed".
// 7. `rateLimit` → 429 {"code":429,"error":"Rate Limited"} with no Retry-After unless `retryAfterSeconds` is set.
// 8. Regions: the API lives under `/{region}/v2`; a job id from one region is 404 in another.
// Also GET /jobs?limit=1..100[&include_deleted=true] (most recent first), a `Request-Id` on every answer.
// Not reproduced: fetch_data downloads (the job is created, its file stays empty), notifications, translation
// and other add-ons, temporary keys and client_ref, the 7-day retention clock, the 1 GB upload limit, and
// the exact wording of error details (UNCONFIRMED beyond the examples PROTOCOLS.md quotes).
// Test switches: `failures` (5xx for the next N calls), `rateLimit`, `hang` (never answers; dropped on
// close), `garbage` (a malformed transcript), `reject` (the job ends rejected), `transcript` (what a done job
// returns; TWO_SPEAKER_FIXTURE by default). `jobs` records what each job received (config, file size,
// first bytes, SHA-256) and `requests` every call (never bodies or keys).

// ---------------------------------------------------------------------------------------------------------
// json-v2 transcripts

export type JsonV2Alternative = {
  content: string;
  confidence: number;
  language: string;
  speaker?: string;
  display?: { direction: "ltr" | "rtl" };
  tags?: string[];
};

export type JsonV2Result = {
  type: "word" | "punctuation" | "entity";
  start_time: number;
  end_time: number;
  alternatives: JsonV2Alternative[];
  is_eos?: boolean;
  attaches_to?: "previous" | "next" | "both" | "none";
  channel?: string;
  volume?: number;
  entity_class?: string;
  written_form?: JsonV2Alternative[];
  spoken_form?: JsonV2Alternative[];
};

export type JsonV2Transcript = {
  format: string;
  job: { id: string; created_at: string; data_name: string; duration?: number };
  metadata: {
    created_at: string;
    type: "transcription";
    transcription_config: { language: string } & Record<string, unknown>;
    language_pack_info?: {
      adapted: boolean;
      itn: boolean;
      language_description: string;
      word_delimiter: string;
      writing_direction: "left-to-right" | "right-to-left";
    };
  };
  results: JsonV2Result[];
};

/** One speaker turn for `buildJsonV2`. `confidence` applies to every word, or word by word (cycling). */
export type TranscriptTurn = { speaker: string; text: string; confidence?: number | number[] };

const LEADING_MARKS = new Set(["„", "“", '"', "(", "¿", "¡", "«", "‚"]);
const TRAILING_MARKS = new Set([".", ",", "!", "?", ";", ":", "…", "“", "”", '"', ")", "»", "‘"]);
const END_OF_SENTENCE = new Set([".", "!", "?", "…"]);

function round(value: number) {
  return Math.round(value * 100) / 100;
}

/**
 * json-v2 from a list of turns, as Speechmatics would answer it: one `word` result per word and one
 * zero-length `punctuation` result per mark (`is_eos` on . ! ? …, `attaches_to` "next" for opening marks
 * such as „), times advancing through the turns, confidence 1.0 on punctuation.
 */
export function buildJsonV2(
  turns: TranscriptTurn[],
  options: { language?: string; startAt?: number; dataName?: string } = {},
): JsonV2Transcript {
  const language = options.language ?? "de";
  const results: JsonV2Result[] = [];
  let time = options.startAt ?? 0.5;
  const mark = (content: string, speaker: string, attaches: JsonV2Result["attaches_to"]): JsonV2Result => ({
    type: "punctuation",
    start_time: round(time),
    end_time: round(time),
    is_eos: END_OF_SENTENCE.has(content),
    attaches_to: attaches,
    alternatives: [{ content, confidence: 1, language, speaker }],
  });
  for (const turn of turns) {
    let wordIndex = 0;
    for (const token of turn.text.split(/\s+/).filter(Boolean)) {
      const chars = [...token];
      if (chars.every((c) => LEADING_MARKS.has(c) || TRAILING_MARKS.has(c) || c === "–" || c === "-")) {
        results.push(mark(token, turn.speaker, "none"));
        continue;
      }
      const leading: string[] = [];
      while (chars.length > 1 && LEADING_MARKS.has(chars[0])) leading.push(chars.shift()!);
      const trailing: string[] = [];
      while (chars.length > 1 && TRAILING_MARKS.has(chars[chars.length - 1])) trailing.unshift(chars.pop()!);
      for (const c of leading) results.push(mark(c, turn.speaker, "next"));
      const content = chars.join("");
      const confidence = Array.isArray(turn.confidence)
        ? turn.confidence[wordIndex % turn.confidence.length]
        : (turn.confidence ?? 0.95);
      wordIndex++;
      const duration = Math.min(0.9, 0.25 + 0.04 * content.length);
      results.push({
        type: "word",
        start_time: round(time),
        end_time: round(time + duration),
        alternatives: [{ content, confidence, language, speaker: turn.speaker }],
      });
      time += duration;
      for (const c of trailing) results.push(mark(c, turn.speaker, "previous"));
      time += trailing.some((c) => END_OF_SENTENCE.has(c)) ? 0.4 : 0.1;
    }
    time += 0.8;
  }
  const created = "2026-01-01T09:00:00.000Z";
  return {
    format: "2.9",
    job: {
      id: "fixture000",
      created_at: created,
      data_name: options.dataName ?? "audio.wav",
      duration: Math.ceil(time),
    },
    metadata: {
      created_at: created,
      type: "transcription",
      transcription_config: { language, diarization: "speaker" },
      language_pack_info: languagePack(language),
    },
    results,
  };
}

function languagePack(language: string): NonNullable<JsonV2Transcript["metadata"]["language_pack_info"]> {
  const descriptions: Record<string, string> = { de: "German", en: "English" };
  return {
    adapted: false,
    itn: true,
    language_description: descriptions[language] ?? language,
    word_delimiter: " ",
    writing_direction: "left-to-right",
  };
}

/** The turns behind TWO_SPEAKER_FIXTURE (a doctor, S1, and a patient, S2): 7 turns, 15 sentences. */
export const TWO_SPEAKER_TURNS: TranscriptTurn[] = [
  {
    speaker: "S1",
    text: "Guten Morgen, Frau Becker. Was führt Sie heute zu mir?",
    confidence: [0.98, 0.96, 0.93, 0.99],
  },
  {
    speaker: "S2",
    text: "Seit drei Tagen habe ich starke Kopfschmerzen. Dazu kommt leichtes Fieber am Abend.",
    confidence: [0.91, 0.62, 0.88, 0.45, 0.97, 0.71, 0.94],
  },
  {
    speaker: "S1",
    text: "Haben Sie Medikamente genommen? Wenn ja, welche und in welcher Dosis?",
    confidence: [0.97, 0.95, 0.83, 0.99, 0.92],
  },
  {
    speaker: "S2",
    text: "Ibuprofen, vierhundert Milligramm, zweimal täglich. Geholfen hat es kaum.",
    confidence: [0.38, 0.55, 0.41, 0.72, 0.3, 0.9],
  },
  {
    speaker: "S1",
    text: "Ich schreibe das auf. Der Ausdruck <script>alert(1)</script> gehört nicht in den Befund.",
    confidence: [0.96, 0.9, 0.93, 0.88, 0.97, 0.66, 0.99],
  },
  {
    speaker: "S2",
    text: "Muss ich mir Sorgen machen? Meine Mutter hatte oft Migräne.",
    confidence: [0.86, 0.77, 0.95],
  },
  {
    speaker: "S1",
    text: "Das klingt eher nach einem Infekt. Wir messen jetzt Blutdruck und Temperatur. Danach besprechen wir die Therapie.",
    confidence: [0.99, 0.94, 0.58, 0.97, 0.92, 0.49, 0.96, 0.87],
  },
];

/**
 * A German json-v2 transcript with two speakers (S1, S2) over seven turns and fifteen sentences, words of
 * low (< 0.5), medium (0.5–0.85) and high (> 0.85) confidence, punctuation with `is_eos`, and the word
 * `<script>alert(1)</script>` — the probe the product must render inert.
 */
export const TWO_SPEAKER_FIXTURE: JsonV2Transcript = buildJsonV2(TWO_SPEAKER_TURNS, { language: "de" });

/** The plain text Speechmatics' `format=txt` gives: words joined by the delimiter, marks attached. */
export function jsonV2ToText(transcript: JsonV2Transcript): string {
  let text = "";
  let glueNext = true;
  for (const result of transcript.results) {
    if (result.type !== "word" && result.type !== "punctuation") continue;
    const content = result.alternatives[0]?.content ?? "";
    const attaches = result.type === "punctuation" ? (result.attaches_to ?? "previous") : "none";
    const glue = glueNext || attaches === "previous" || attaches === "both";
    text += (glue ? "" : " ") + content;
    glueNext = attaches === "next" || attaches === "both";
  }
  return text;
}

function srtTime(seconds: number) {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
}

/** SRT with one cue per sentence (the real service also splits on length; not reproduced). */
function jsonV2ToSrt(transcript: JsonV2Transcript): string {
  const cues: string[] = [];
  let sentence: JsonV2Result[] = [];
  const flush = () => {
    const words = sentence.filter((r) => r.type === "word");
    if (words.length === 0) return;
    const text = jsonV2ToText({ ...transcript, results: sentence });
    const start = words[0].start_time;
    const end = words[words.length - 1].end_time;
    cues.push(`${cues.length + 1}\n${srtTime(start)} --> ${srtTime(end)}\n${text}\n`);
    sentence = [];
  };
  for (const result of transcript.results) {
    sentence.push(result);
    if (result.is_eos) flush();
  }
  flush();
  return cues.join("\n");
}

// ---------------------------------------------------------------------------------------------------------
// The server

export type FakeRoute = "create" | "list" | "status" | "transcript" | "delete";
export type FakeScope = FakeRoute | "any";
export type FakeJobStatus = "running" | "done" | "rejected" | "deleted" | "expired";

export type FakeJob = {
  id: string;
  region: string;
  createdAt: Date;
  status: FakeJobStatus;
  /** The parsed `config` part exactly as received. */
  config: Record<string, unknown>;
  dataName: string;
  /** What arrived as `data_file`; null for a fetch_data job. */
  dataFile: { filename: string; contentType: string; size: number; head: Buffer; sha256: string } | null;
  /** Seconds, from the WAV header when the file is a WAV, else 0. */
  duration: number;
  /** Status polls answered while the job ran. */
  polls: number;
  errors?: Array<{ timestamp: string; message: string }>;
  /** Set by DELETE: whether it needed `force=true`. */
  deletion: { at: Date; force: boolean } | null;
};

export type FakeCall = {
  method: string;
  route: FakeRoute | null;
  region: string | null;
  jobId: string | null;
  /** The raw query string, without "?". */
  query: string;
  /** Whether the call carried an accepted Bearer key. */
  authorized: boolean;
  /** null while unanswered (hang mode). */
  status: number | null;
};

export type FakeSpeechmaticsOptions = {
  /** Accepted API keys; ["test-key"] by default. */
  apiKeys?: string[];
  /** 0 (any free port) by default, so a standalone run can pick a fixed one. */
  port?: number;
  host?: string;
  /** The region `url` points at; "eu1" by default. */
  region?: string;
};

export interface FakeSpeechmatics {
  /** The batch base URL of the default region, e.g. http://127.0.0.1:PORT/eu1/v2 (no trailing slash). */
  readonly url: string;
  readonly origin: string;
  regionUrl(region: string): string;
  readonly jobs: FakeJob[];
  readonly requests: FakeCall[];
  /** How many calls reached `route` (all calls when omitted). */
  calls(route?: FakeRoute): number;
  apiKeys: string[];
  unauthorizedBody: "html" | "json";
  /** Every call with a good key gets 403 "Entitlement check failed". */
  forbidden: boolean;
  /** Status polls answered "running" before the job finishes (0: done at once). */
  pollsUntilDone: number;
  /** Minimum time a job runs; a held `wait` ends early when it elapses. */
  processingMs: number;
  /** Cap on every `wait` and the default wait (~2 s on SaaS). */
  maxWaitMs: number;
  transcript: JsonV2Transcript | ((job: FakeJob) => JsonV2Transcript);
  /** Jobs end `rejected` with this message instead of `done`. */
  reject: { message: string } | null;
  /** "truncated": cut-off JSON; "shape": valid JSON that is not json-v2. */
  garbage: "truncated" | "shape" | null;
  /** The next `count` calls in scope answer `status` (500, 502, 503…). */
  failures: { status: number; count: number; on?: FakeScope } | null;
  /** The next `count` calls in scope answer 429, with Retry-After only when `retryAfterSeconds` is set. */
  rateLimit: { count: number; on?: FakeScope; retryAfterSeconds?: number } | null;
  /** Calls in scope are never answered (request bodies are read); dropped on close. */
  hang: { on?: FakeScope } | null;
  /** Makes a job answer 410 ("Job Expired" / "File Expired"), as after retention. */
  expireJob(id: string): void;
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly detail?: string,
  ) {
    super(error);
  }
}

const UNAUTHORIZED_HTML =
  "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n" +
  "<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

const MODELS = new Set(["standard", "enhanced", "melia-1"]);
const DIARIZATION = new Set(["none", "speaker", "channel"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function inScope(scope: FakeScope | undefined, route: FakeRoute | null) {
  return scope === undefined || scope === "any" || scope === route;
}

/** Seconds of audio in a RIFF/WAVE file, from its fmt and data chunks; 0 when it is not one. */
function wavSeconds(bytes: Buffer): number {
  if (bytes.length < 12 || bytes.toString("ascii", 0, 4) !== "RIFF" || bytes.toString("ascii", 8, 12) !== "WAVE") {
    return 0;
  }
  let byteRate = 0;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = bytes.toString("ascii", at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === "fmt " && at + 20 <= bytes.length) byteRate = bytes.readUInt32LE(at + 16);
    if (id === "data") return byteRate > 0 ? Math.round(Math.min(size, bytes.length - at - 8) / byteRate) : 0;
    at += 8 + size + (size % 2);
  }
  return 0;
}

/** Checks the fields this server knows; anything else in the config is accepted as the real API does. */
function validateConfig(config: unknown): asserts config is Record<string, unknown> {
  const invalid = (detail: string) => new ApiError(400, "Job rejected", detail);
  if (!isRecord(config)) throw invalid("Job config JSON is invalid");
  if (typeof config.type !== "string") throw invalid("Job config is missing type");
  if (config.type !== "transcription") throw invalid(`Job type ${config.type} is not supported`);
  const transcription = config.transcription_config;
  if (!isRecord(transcription)) throw invalid("Job config is missing transcription_config");
  if (typeof transcription.language !== "string" || !transcription.language) throw invalid("No language selected");
  for (const key of ["model", "operating_point"]) {
    if (transcription[key] !== undefined && !MODELS.has(String(transcription[key])))
      throw invalid(`Unsupported ${key}`);
  }
  if (transcription.diarization !== undefined && !DIARIZATION.has(String(transcription.diarization)))
    throw invalid("Unsupported diarization");
  const vocab = transcription.additional_vocab;
  if (vocab !== undefined) {
    const ok =
      Array.isArray(vocab) &&
      vocab.every(
        (entry) =>
          isRecord(entry) &&
          typeof entry.content === "string" &&
          entry.content.length > 0 &&
          (entry.sounds_like === undefined ||
            (Array.isArray(entry.sounds_like) && entry.sounds_like.every((s) => typeof s === "string"))),
      );
    if (!ok) throw invalid("Job config JSON is invalid");
  }
}

async function drain(req: IncomingMessage) {
  if (req.readableEnded) return;
  await new Promise<void>((resolve) => {
    req.on("end", resolve);
    req.on("error", () => resolve());
    req.on("close", () => resolve());
    req.resume();
  });
}

export async function startFakeSpeechmatics(options: FakeSpeechmaticsOptions = {}): Promise<FakeSpeechmatics> {
  const defaultRegion = options.region ?? "eu1";
  const jobs: FakeJob[] = [];
  const requests: FakeCall[] = [];
  let closed = false;

  const server = createServer((req, res) => {
    void handle(req, res);
  });

  const state: FakeSpeechmatics = {
    url: "",
    origin: "",
    regionUrl(region) {
      return `${state.origin}/${region}/v2`;
    },
    jobs,
    requests,
    calls(route) {
      return route ? requests.filter((r) => r.route === route).length : requests.length;
    },
    apiKeys: options.apiKeys ?? ["test-key"],
    unauthorizedBody: "html",
    forbidden: false,
    pollsUntilDone: 0,
    processingMs: 0,
    maxWaitMs: 2_000,
    transcript: TWO_SPEAKER_FIXTURE,
    reject: null,
    garbage: null,
    failures: null,
    rateLimit: null,
    hang: null,
    expireJob(id) {
      const job = jobs.find((j) => j.id === id);
      if (job) job.status = "expired";
    },
    async close() {
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };

  function send(res: ServerResponse, status: number, body: string, type: string, headers: Record<string, string> = {}) {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, {
      "Content-Type": type,
      "Content-Length": Buffer.byteLength(body),
      "Request-Id": randomUUID(),
      ...headers,
    });
    res.end(body);
  }

  function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    send(res, status, JSON.stringify(body), "application/json", headers);
  }

  function sendError(res: ServerResponse, error: ApiError, headers: Record<string, string> = {}) {
    sendJson(
      res,
      error.status,
      { code: error.status, error: error.error, ...(error.detail ? { detail: error.detail } : {}) },
      headers,
    );
  }

  function authorized(req: IncomingMessage) {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
    return match !== null && state.apiKeys.includes(match[1]);
  }

  function sleep(ms: number) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** The `wait` a GET asked for, in ms, capped; the capped default when absent. */
  function waitOf(params: URLSearchParams): number {
    const raw = params.get("wait");
    if (raw === null) return state.maxWaitMs;
    const seconds = Number(raw);
    if (!Number.isFinite(seconds) || seconds < 0) throw new ApiError(400, "Malformed request", "Invalid wait");
    return Math.min(seconds * 1000, state.maxWaitMs);
  }

  function finishIfDue(job: FakeJob) {
    if (job.status !== "running") return;
    if (job.polls < state.pollsUntilDone || Date.now() - job.createdAt.getTime() < state.processingMs) return;
    if (state.reject) {
      job.status = "rejected";
      job.errors = [{ timestamp: new Date().toISOString(), message: state.reject.message }];
    } else {
      job.status = "done";
    }
  }

  /** Holds the answer while the job runs, up to `waitMs` (only the time condition can change meanwhile). */
  async function hold(job: FakeJob, waitMs: number, res: ServerResponse) {
    const end = Date.now() + waitMs;
    while (job.status === "running" && !closed && !res.destroyed && Date.now() < end) {
      await sleep(Math.min(20, end - Date.now()));
      finishIfDue(job);
    }
  }

  function jobDetails(job: FakeJob) {
    return {
      id: job.id,
      created_at: job.createdAt.toISOString(),
      data_name: job.dataName,
      duration: job.duration,
      status: job.status,
      config: job.config,
      ...(job.errors ? { errors: job.errors } : {}),
    };
  }

  function findJob(region: string, id: string): FakeJob {
    const job = jobs.find((j) => j.id === id && j.region === region);
    if (!job) throw new ApiError(404, "Job not found");
    return job;
  }

  function transcriptOf(job: FakeJob): JsonV2Transcript {
    const base = typeof state.transcript === "function" ? state.transcript(job) : state.transcript;
    const submitted = isRecord(job.config.transcription_config) ? job.config.transcription_config : {};
    const language = typeof submitted.language === "string" ? submitted.language : "de";
    return {
      ...base,
      job: { id: job.id, created_at: job.createdAt.toISOString(), data_name: job.dataName, duration: job.duration },
      metadata: {
        ...base.metadata,
        transcription_config: { ...submitted, language },
        language_pack_info: languagePack(language),
      },
    };
  }

  function sendTranscript(res: ServerResponse, job: FakeJob, format: string) {
    if (state.garbage === "truncated") {
      const text = JSON.stringify(transcriptOf(job));
      return send(res, 200, text.slice(0, Math.floor(text.length / 2)), "application/json");
    }
    if (state.garbage === "shape") {
      return sendJson(res, 200, { format: "2.9", results: [{ type: "word", start_time: "soon", alternatives: {} }] });
    }
    const transcript = transcriptOf(job);
    if (format === "txt") return send(res, 200, `${jsonV2ToText(transcript)}\n`, "text/plain; charset=utf-8");
    if (format === "srt") return send(res, 200, jsonV2ToSrt(transcript), "application/x-subrip; charset=utf-8");
    sendJson(res, 200, transcript);
  }

  async function createJob(req: IncomingMessage, res: ServerResponse, region: string, params: URLSearchParams) {
    const contentType = req.headers["content-type"] ?? "";
    if (!/^multipart\/form-data/i.test(contentType)) {
      await drain(req);
      throw new ApiError(400, "Malformed request", "Expected multipart/form-data");
    }
    let form: Awaited<ReturnType<UndiciRequest["formData"]>>;
    try {
      form = await new UndiciRequest("http://fake.invalid/jobs", {
        method: "POST",
        headers: { "content-type": contentType },
        body: req,
        duplex: "half",
      }).formData();
    } catch {
      await drain(req);
      throw new ApiError(400, "Malformed request", "The multipart body could not be parsed");
    }
    const rawConfig = form.get("config");
    if (rawConfig === null) throw new ApiError(400, "Job rejected", "Missing config");
    const configText = typeof rawConfig === "string" ? rawConfig : await rawConfig.text();
    let config: unknown;
    try {
      config = JSON.parse(configText);
    } catch {
      throw new ApiError(400, "Job rejected", "Job config JSON is invalid");
    }
    validateConfig(config);
    const file = form.get("data_file");
    const fetchUrl = isRecord(config.fetch_data) ? config.fetch_data.url : undefined;
    if ((file === null || typeof file === "string") && typeof fetchUrl !== "string")
      throw new ApiError(400, "Missing data_file");
    let dataFile: FakeJob["dataFile"] = null;
    let duration = 0;
    if (file !== null && typeof file !== "string") {
      const bytes = Buffer.from(await file.arrayBuffer());
      dataFile = {
        filename: file.name,
        contentType: file.type,
        size: bytes.length,
        head: Buffer.from(bytes.subarray(0, 64)),
        sha256: createHash("sha256").update(bytes).digest("hex"),
      };
      duration = wavSeconds(bytes);
    }
    const job: FakeJob = {
      id: randomBytes(5).toString("hex"),
      region,
      createdAt: new Date(),
      status: "running",
      config,
      dataName: dataFile?.filename ?? String(fetchUrl ?? ""),
      dataFile,
      duration,
      polls: 0,
      deletion: null,
    };
    jobs.push(job);
    finishIfDue(job);
    const wait = params.get("wait");
    if (wait === null) return sendJson(res, 201, { id: job.id });
    // POST ?wait=: SaaS holds the answer and reports the status ("created" while it runs).
    await hold(job, waitOf(params), res);
    const format = params.get("format") ?? "json-v2";
    const body: Record<string, unknown> = { id: job.id, status: job.status === "running" ? "created" : job.status };
    if (job.status === "done") {
      const transcript = transcriptOf(job);
      body[format] =
        format === "txt" ? jsonV2ToText(transcript) : format === "srt" ? jsonV2ToSrt(transcript) : transcript;
    }
    sendJson(res, 201, body);
  }

  function list(res: ServerResponse, region: string, params: URLSearchParams) {
    const limit = Number(params.get("limit") ?? "100");
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError(400, "Malformed request", "limit");
    const includeDeleted = params.get("include_deleted") === "true";
    const found = jobs
      .filter((j) => j.region === region && (includeDeleted || j.status !== "deleted"))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .slice(0, limit);
    sendJson(res, 200, { jobs: found.map(jobDetails) });
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://fake.invalid");
    const method = (req.method ?? "GET").toUpperCase();
    const match = /^\/([a-z0-9]+)\/v2\/jobs(?:\/([^/]+)(\/transcript)?)?\/?$/.exec(url.pathname);
    const region = match?.[1] ?? null;
    const jobId = match?.[2] ? decodeURIComponent(match[2]) : null;
    let route: FakeRoute | null = null;
    if (match) {
      if (match[3]) route = method === "GET" ? "transcript" : null;
      else if (jobId) route = method === "GET" ? "status" : method === "DELETE" ? "delete" : null;
      else route = method === "POST" ? "create" : method === "GET" ? "list" : null;
    }
    const call: FakeCall = {
      method,
      route,
      region,
      jobId,
      query: url.search.slice(1),
      authorized: authorized(req),
      status: null,
    };
    requests.push(call);
    res.on("finish", () => {
      call.status = res.statusCode;
    });
    try {
      if (state.hang && inScope(state.hang.on, route)) {
        req.resume();
        return; // never answered; close() drops the connection
      }
      if (route !== "create") await drain(req);
      if (state.failures && state.failures.count > 0 && inScope(state.failures.on, route)) {
        state.failures.count--;
        if (route === "create") await drain(req);
        const reason = state.failures.status === 503 ? "Service Unavailable" : "Internal Server Error";
        throw new ApiError(state.failures.status, reason);
      }
      if (!call.authorized) {
        await drain(req);
        if (state.unauthorizedBody === "html") return send(res, 401, UNAUTHORIZED_HTML, "text/html");
        throw new ApiError(401, "Unauthorized");
      }
      if (state.forbidden) {
        await drain(req);
        throw new ApiError(403, "Forbidden", "Entitlement check failed");
      }
      if (state.rateLimit && state.rateLimit.count > 0 && inScope(state.rateLimit.on, route)) {
        state.rateLimit.count--;
        await drain(req);
        const seconds = state.rateLimit.retryAfterSeconds;
        return sendError(
          res,
          new ApiError(429, route === "create" ? "Max concurrent running jobs exceeded" : "Rate Limited"),
          seconds === undefined ? {} : { "Retry-After": String(seconds) },
        );
      }
      if (!match || region === null) throw new ApiError(404, "Not found");
      if (route === null) throw new ApiError(405, "Method not allowed");
      const params = url.searchParams;
      if (route === "create") return await createJob(req, res, region, params);
      if (route === "list") return list(res, region, params);

      const job = findJob(region, jobId!);
      if (route === "status") {
        const waitMs = waitOf(params);
        if (job.status === "expired") throw new ApiError(410, "Job Expired");
        finishIfDue(job);
        await hold(job, waitMs, res);
        if (job.status === "running") job.polls++;
        return sendJson(res, 200, { job: jobDetails(job) });
      }
      if (route === "transcript") {
        const format = params.get("format") ?? "json-v2";
        if (!["json-v2", "txt", "srt"].includes(format)) throw new ApiError(400, "Malformed request", "format");
        const waitMs = waitOf(params);
        if (job.status === "expired") throw new ApiError(410, "File Expired");
        if (job.status === "running") await hold(job, waitMs, res);
        if (job.status !== "done") throw new ApiError(404, "Transcription not ready");
        return sendTranscript(res, job, format);
      }
      // DELETE
      if (job.status === "expired") throw new ApiError(410, "Job Expired");
      const force = params.get("force") === "true";
      if (job.status === "running" && !force) throw new ApiError(423, "Resource Locked");
      if (job.status !== "deleted") {
        job.deletion = { at: new Date(), force: job.status === "running" };
        job.status = "deleted";
      }
      sendJson(res, 200, { job: jobDetails(job) });
    } catch (error) {
      const apiError = error instanceof ApiError ? error : new ApiError(500, "Internal Server Error");
      if (!res.headersSent && !res.destroyed) sendError(res, apiError);
      else res.destroy();
    }
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  Object.assign(state, { origin: `http://${host}:${port}` });
  Object.assign(state, { url: state.regionUrl(defaultRegion) });
  return state;
}
