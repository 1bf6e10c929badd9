import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Request } from "undici";

// A local OpenAI-compatible transcription server (POST /v1/audio/transcriptions, GET /v1/models) that
// behaves as PROTOCOLS.md §3.1, §3.3 and §3.4 describe OpenAI and the self-hosted servers. Reproduced:
// - multipart/form-data parsing; `timestamp_granularities[]` from repeated fields (word|segment, anything
//   else → 400); `response_format` json (default) | text | srt | vtt | verbose_json; `word` with anything but
//   verbose_json → 400 (OpenAI; speaches only logs a warning and answers); temperature 0–1; a missing
//   file or model → 400; an unsupported file extension → 400; more than 25 MiB → 413 (OpenAI's whisper-1 cap).
// - verbose_json: segments by default, words only when `word` is asked for, and with granularities ["word"]
//   alone no segments (recorded OpenAI behaviour, faster-whisper-server's openai_timestamp_granularities_test).
// - Dialects (`dialect`), each with its own error body and quirks:
//   openai   — 401 {"error":{…,"type":"invalid_request_error","code":"invalid_api_key"}}; language as a name
//              ("german"); words without punctuation and without probability;
//   speaches — 403 {"detail"} for a missing or wrong key; FastAPI error bodies; language as a code ("de");
//              words with a leading space, punctuation attached and a `probability`;
//   vllm     — `duration` as a string; old flat error bodies {"object":"error",…,"code":<int>} (its word
//              format is UNCONFIRMED, so words look like OpenAI's);
//   ollama   — only {"text"} whatever the response_format (text/plain for `text`); no auth of its own.
// - Failures on demand: `failures` (answers for the next requests, in order), `failAlways`; each with an
//   error-body style (OpenAI object, vLLM flat with an int code, llama.cpp {code,message,type}, FastAPI
//   {detail}, plain text), extra headers (Retry-After, retry-after-ms, x-should-retry) or a body cut in half
//   (`truncated`, e.g. a 200 with malformed JSON). `FAILURES` has the common ones.
// - `hang`: reads the upload and never answers; `stallBody`: sends a 200's headers and half its body, then
//   nothing more. `modelsEndpoint: false`: GET /v1/models → 404.
// Not reproduced: streaming (`stream=true`), `include[]`, `chunking_strategy`, diarized_json, the gpt-4o
// models' json-only rule, Retry-After as an HTTP date, real recognition (the transcript is whatever the test
// sets), exact wording of real error messages.
// `requests` logs every call: the form fields, and the file's name, type, size, first bytes and SHA-256;
// never the Authorization header's value.

export type FakeDialect = "openai" | "speaches" | "vllm" | "ollama";
export type FakeErrorStyle = "openai" | "vllm" | "llamacpp" | "fastapi" | "plain";

export type FakeSegment = { start: number; end: number; text: string; avg_logprob: number; no_speech_prob?: number };
/** A word as faster-whisper produces it: punctuation attached ("Tag."), with a probability. */
export type FakeWord = { word: string; start: number; end: number; probability: number };
export type FakeTranscript = {
  /** As OpenAI reports it: a name ("german"). */
  language: string;
  /** As faster-whisper reports it: a code ("de"). */
  languageCode: string;
  duration: number;
  text: string;
  segments: FakeSegment[];
  words: FakeWord[];
};

export type FakeFailure = {
  status: number;
  /** The error-body shape; the dialect's own by default. */
  style?: FakeErrorStyle;
  message?: string;
  type?: string;
  code?: string | number | null;
  headers?: Record<string, string>;
  /** Send a normal transcription body cut in half instead of an error body (with status 200: malformed JSON). */
  truncated?: boolean;
};

export type FakeTranscriptionRequest = {
  method: string;
  /** e.g. "/v1/audio/transcriptions". */
  path: string;
  /** Whether an `Authorization: Bearer …` header came with it (its value is not logged). */
  bearer: boolean;
  /** Every non-file form field, repeated fields in the order sent. */
  fields: Record<string, string[]>;
  file: { name: string; type: string; size: number; head: Buffer; sha256: string } | null;
  /** null while unanswered (hang). */
  status: number | null;
};

export type FakeOpenAiOptions = {
  dialect?: FakeDialect;
  /** When set, every call needs `Authorization: Bearer <apiKey>`. */
  apiKey?: string | null;
  transcript?: FakeTranscript;
  /** Listed by GET /v1/models. */
  models?: string[];
};

export interface FakeOpenAiServer {
  /** The API root, `http://127.0.0.1:<port>/v1`. */
  readonly url: string;
  readonly requests: FakeTranscriptionRequest[];
  dialect: FakeDialect;
  apiKey: string | null;
  transcript: FakeTranscript;
  /** Answers for the next requests, in order; normal service resumes when the list is empty. */
  failures: FakeFailure[];
  /** The answer to every request while set (after `failures` is used up). */
  failAlways: FakeFailure | null;
  hang: boolean;
  /** Successful answers stop halfway through the body and never finish. */
  stallBody: boolean;
  modelsEndpoint: boolean;
  /** Queues the same failure for the next `count` requests. */
  failNext(count: number, failure: FakeFailure): void;
  /** The calls to /audio/transcriptions. */
  transcriptionRequests(): FakeTranscriptionRequest[];
  close(): Promise<void>;
}

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const AUDIO_EXTENSIONS = new Set(["flac", "mp3", "mp4", "mpeg", "mpga", "m4a", "ogg", "wav", "webm"]);
const RESPONSE_FORMATS = new Set(["json", "text", "srt", "vtt", "verbose_json"]);

export const FAILURES = {
  /** OpenAI's rate limit: Retry-After in seconds, and optionally retry-after-ms. */
  rateLimited(retryAfterSeconds: number, retryAfterMs?: number): FakeFailure {
    const headers: Record<string, string> = { "retry-after": String(retryAfterSeconds) };
    if (retryAfterMs !== undefined) headers["retry-after-ms"] = String(retryAfterMs);
    return {
      status: 429,
      style: "openai",
      message: "Rate limit reached for whisper-1 on requests per min (RPM): Limit 50, Used 50, Requested 1.",
      type: "requests",
      code: "rate_limit_exceeded",
      headers,
    };
  },
  /** Exhausted quota: a 429 that retrying cannot fix. */
  quotaExceeded(): FakeFailure {
    return {
      status: 429,
      style: "openai",
      message: "You exceeded your current quota, please check your plan and billing details.",
      type: "insufficient_quota",
      code: "insufficient_quota",
    };
  },
  overloaded(): FakeFailure {
    return { status: 503, style: "openai", message: "The engine is currently overloaded, please try again later" };
  },
  /** llama.cpp's answer while the model loads. */
  loadingModel(): FakeFailure {
    return { status: 503, style: "llamacpp", message: "Loading model", type: "unavailable_error" };
  },
  /** A 200 whose JSON body breaks off. */
  malformed(): FakeFailure {
    return { status: 200, truncated: true };
  },
};

function round(value: number) {
  return Math.round(value * 1000) / 1000;
}

/**
 * A transcript from segment texts: each segment's words are spread evenly over it, with the given word
 * probabilities (or exp(avg_logprob)) — enough realism for an adapter test.
 */
export function buildTranscript(input: {
  language: string;
  languageCode: string;
  duration: number;
  segments: Array<{ start: number; end: number; text: string; avg_logprob: number; wordProbabilities?: number[] }>;
}): FakeTranscript {
  const words: FakeWord[] = [];
  for (const segment of input.segments) {
    const parts = segment.text.trim().split(/\s+/).filter(Boolean);
    const step = (segment.end - segment.start) / Math.max(parts.length, 1);
    parts.forEach((word, index) => {
      words.push({
        word,
        start: round(segment.start + index * step),
        end: round(segment.start + (index + 0.9) * step),
        probability: segment.wordProbabilities?.[index] ?? round(Math.exp(segment.avg_logprob)),
      });
    });
  }
  const segments = input.segments.map(({ start, end, text, avg_logprob }) => ({
    start,
    end,
    text: ` ${text.trim()}`,
    avg_logprob,
    no_speech_prob: 0.01,
  }));
  return {
    language: input.language,
    languageCode: input.languageCode,
    duration: input.duration,
    text: input.segments.map((s) => s.text.trim()).join(" "),
    segments,
    words,
  };
}

/**
 * A German consultation snippet. Segment confidences exp(avg_logprob): 0.951 (high), 0.705 (medium), 0.301
 * (low), 0.905 (high). The low segment carries `<script>alert(1)</script>` as a word, for escaping tests.
 * Word probabilities (speaches dialect) differ from the segment figures on purpose.
 */
export const GERMAN_TRANSCRIPT: FakeTranscript = buildTranscript({
  language: "german",
  languageCode: "de",
  duration: 14.2,
  segments: [
    { start: 0, end: 1.4, text: "Guten Tag.", avg_logprob: -0.05, wordProbabilities: [0.99, 0.97] },
    {
      start: 1.6,
      end: 6.2,
      text: "Der Patient berichtet über Kopfschmerzen seit drei Tagen.",
      avg_logprob: -0.35,
      wordProbabilities: [0.9, 0.8, 0.7, 0.75, 0.6, 0.85, 0.8, 0.7],
    },
    {
      start: 6.5,
      end: 10.4,
      text: "Er schreibt <script>alert(1)</script> ins Formular, sagt er?",
      avg_logprob: -1.2,
      wordProbabilities: [0.4, 0.35, 0.1, 0.45, 0.3, 0.4, 0.2],
    },
    {
      start: 10.8,
      end: 14,
      text: "Leichtes Fieber, 38,5 Grad!",
      avg_logprob: -0.1,
      wordProbabilities: [0.95, 0.93, 0.88, 0.96],
    },
  ],
});

const TRAILING_PUNCTUATION = /[.,?!;:]+$/;

function timestamp(seconds: number, separator: "," | ".") {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function subtitles(transcript: FakeTranscript, format: "srt" | "vtt") {
  const cues = transcript.segments.map((segment, index) => {
    const times = `${timestamp(segment.start, format === "srt" ? "," : ".")} --> ${timestamp(segment.end, format === "srt" ? "," : ".")}`;
    return format === "srt" ? `${index + 1}\n${times}\n${segment.text.trim()}\n` : `${times}\n${segment.text.trim()}\n`;
  });
  return format === "srt" ? cues.join("\n") : `WEBVTT\n\n${cues.join("\n")}`;
}

function defaultType(status: number) {
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

function llamaType(status: number) {
  const types: Record<number, string> = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    501: "not_supported_error",
    503: "unavailable_error",
  };
  return types[status] ?? "server_error";
}

function styleOf(dialect: FakeDialect): FakeErrorStyle {
  if (dialect === "speaches") return "fastapi";
  if (dialect === "vllm") return "vllm";
  return "openai";
}

class FakeHttpError extends Error {
  constructor(readonly failure: FakeFailure) {
    super(failure.message ?? `HTTP ${failure.status}`);
  }
}

function badRequest(message: string, param: string | null = null): FakeHttpError {
  return new FakeHttpError({ status: 400, message, type: "invalid_request_error", code: param });
}

export async function startFakeOpenAiServer(options: FakeOpenAiOptions = {}): Promise<FakeOpenAiServer> {
  const requests: FakeTranscriptionRequest[] = [];
  const models = options.models ?? ["whisper-1"];
  const server = createServer((req, res) => {
    void handle(req, res);
  });

  const state: FakeOpenAiServer = {
    url: "",
    requests,
    dialect: options.dialect ?? "openai",
    apiKey: options.apiKey ?? null,
    transcript: options.transcript ?? GERMAN_TRANSCRIPT,
    failures: [],
    failAlways: null,
    hang: false,
    stallBody: false,
    modelsEndpoint: true,
    failNext(count, failure) {
      for (let i = 0; i < count; i++) state.failures.push(failure);
    },
    transcriptionRequests() {
      return requests.filter((r) => r.path === "/v1/audio/transcriptions");
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };

  function send(res: ServerResponse, status: number, body: string, type: string, headers: Record<string, string> = {}) {
    res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body), ...headers });
    if (state.stallBody && status === 200) {
      res.write(body.slice(0, Math.floor(body.length / 2)));
      return; // never ends
    }
    res.end(body);
  }

  function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    send(res, status, JSON.stringify(body), "application/json", headers);
  }

  function sendFailure(res: ServerResponse, failure: FakeFailure) {
    const headers = failure.headers ?? {};
    if (failure.truncated) {
      const full = JSON.stringify(verboseBody(["segment"]));
      return send(res, failure.status, full.slice(0, Math.floor(full.length / 2)), "application/json", headers);
    }
    const { status } = failure;
    const message = failure.message ?? `Simulated failure ${status}`;
    switch (failure.style ?? styleOf(state.dialect)) {
      case "openai":
        return sendJson(
          res,
          status,
          { error: { message, type: failure.type ?? defaultType(status), param: null, code: failure.code ?? null } },
          headers,
        );
      case "vllm":
        return sendJson(
          res,
          status,
          {
            object: "error",
            message,
            type: failure.type ?? "BadRequestError",
            param: null,
            code: typeof failure.code === "number" ? failure.code : status,
          },
          headers,
        );
      case "llamacpp":
        return sendJson(
          res,
          status,
          { error: { code: status, message, type: failure.type ?? llamaType(status) } },
          headers,
        );
      case "fastapi":
        return sendJson(res, status, { detail: message }, headers);
      case "plain":
        return send(res, status, `<html><body><h1>${status}</h1>${message}</body></html>`, "text/html", headers);
    }
  }

  function authFailure(bearer: string | null): FakeFailure | null {
    if (!state.apiKey || state.dialect === "ollama" || bearer === state.apiKey) return null;
    if (state.dialect === "speaches") return { status: 403, style: "fastapi", message: "Invalid API key" };
    return {
      status: 401,
      style: state.dialect === "vllm" ? "vllm" : "openai",
      message: bearer
        ? "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
        : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
      type: "invalid_request_error",
      code: "invalid_api_key",
    };
  }

  function wordsFor(dialect: FakeDialect) {
    return state.transcript.words.map((w) => {
      if (dialect === "speaches") return { start: w.start, end: w.end, word: ` ${w.word}`, probability: w.probability };
      // OpenAI's words carry no punctuation and no probability.
      return { word: w.word.replace(TRAILING_PUNCTUATION, ""), start: w.start, end: w.end };
    });
  }

  function verboseBody(granularities: string[]) {
    const { transcript, dialect } = state;
    const body: Record<string, unknown> = {
      task: "transcribe",
      language: dialect === "speaches" ? transcript.languageCode : transcript.language,
      duration: dialect === "vllm" ? String(transcript.duration) : transcript.duration,
      text: transcript.text,
    };
    const wantsWords = granularities.includes("word");
    if (!(granularities.length === 1 && wantsWords)) {
      body.segments = transcript.segments.map((segment, id) => ({
        id,
        seek: 0,
        start: segment.start,
        end: segment.end,
        text: segment.text,
        tokens: [50364 + id],
        temperature: 0,
        avg_logprob: segment.avg_logprob,
        compression_ratio: 1.2,
        no_speech_prob: segment.no_speech_prob ?? 0.01,
      }));
    }
    if (wantsWords) body.words = wordsFor(dialect);
    if (dialect === "openai") body.usage = { type: "duration", seconds: Math.ceil(transcript.duration) };
    return body;
  }

  async function readForm(req: IncomingMessage, entry: FakeTranscriptionRequest) {
    const contentType = req.headers["content-type"] ?? "";
    if (!contentType.toLowerCase().startsWith("multipart/form-data")) {
      req.resume();
      throw badRequest("Expected a multipart/form-data body.");
    }
    let form: Awaited<ReturnType<Request["formData"]>>;
    try {
      const request = new Request("http://fake/upload", {
        method: "POST",
        headers: { "content-type": contentType },
        body: req,
        duplex: "half",
      });
      form = await request.formData();
    } catch {
      throw badRequest("Could not parse multipart form data.");
    }
    let file: (Blob & { name?: string }) | null = null;
    for (const [key, value] of form) {
      if (typeof value === "string") {
        (entry.fields[key] ??= []).push(value);
      } else if (key === "file") {
        file = value as Blob & { name?: string };
      }
    }
    if (file) {
      const bytes = Buffer.from(await file.arrayBuffer());
      entry.file = {
        name: file.name ?? "",
        type: file.type,
        size: bytes.length,
        head: bytes.subarray(0, 16),
        sha256: createHash("sha256").update(bytes).digest("hex"),
      };
    }
  }

  function transcribe(res: ServerResponse, entry: FakeTranscriptionRequest) {
    const field = (name: string) => entry.fields[name]?.[0];
    const { dialect, transcript } = state;
    if (!entry.file) throw badRequest("You must provide a file.", "file");
    if (!field("model")) throw badRequest("You must provide a model parameter.", "model");
    const extension = entry.file.name.split(".").pop()?.toLowerCase() ?? "";
    if (dialect === "openai" && !AUDIO_EXTENSIONS.has(extension))
      throw badRequest(`Invalid file format. Supported formats: ${[...AUDIO_EXTENSIONS].join(", ")}`, "file");
    if (dialect === "openai" && entry.file.size > MAX_UPLOAD_BYTES)
      throw new FakeHttpError({ status: 413, message: `Maximum content size limit (${MAX_UPLOAD_BYTES}) exceeded.` });
    const format = field("response_format") ?? "json";
    if (!RESPONSE_FORMATS.has(format)) throw badRequest(`Invalid response_format: ${format}`, "response_format");
    const temperature = Number(field("temperature") ?? "0");
    if (!(temperature >= 0 && temperature <= 1)) throw badRequest("temperature must be between 0 and 1", "temperature");
    const granularities = entry.fields["timestamp_granularities[]"] ?? [];
    for (const value of granularities) {
      if (value !== "word" && value !== "segment")
        throw badRequest(`Invalid timestamp granularity: ${value}`, "timestamp_granularities");
    }
    if (dialect !== "speaches" && dialect !== "ollama" && granularities.includes("word") && format !== "verbose_json")
      throw badRequest(
        "timestamp_granularities[] word requires response_format=verbose_json",
        "timestamp_granularities",
      );

    if (dialect === "ollama") {
      // Ollama prompts an audio-capable chat model: text only, whatever was asked for.
      if (format === "text") return send(res, 200, transcript.text, "text/plain; charset=utf-8");
      return sendJson(res, 200, { text: transcript.text });
    }
    switch (format) {
      case "text":
        return send(res, 200, `${transcript.text}\n`, "text/plain; charset=utf-8");
      case "srt":
      case "vtt":
        return send(res, 200, subtitles(transcript, format), "text/plain; charset=utf-8");
      case "verbose_json":
        return sendJson(res, 200, verboseBody(granularities.length ? granularities : ["segment"]));
      default:
        return sendJson(res, 200, { text: transcript.text });
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://fake");
    const method = (req.method ?? "GET").toUpperCase();
    const header = req.headers.authorization;
    const bearer = header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : null;
    const entry: FakeTranscriptionRequest = {
      method,
      path: url.pathname.replace(/\/+$/, ""),
      bearer: bearer !== null,
      fields: {},
      file: null,
      status: null,
    };
    requests.push(entry);
    res.on("finish", () => {
      entry.status = res.statusCode;
    });
    try {
      const isTranscription = entry.path === "/v1/audio/transcriptions";
      // The upload is read before any answer: a server that answers mid-upload and closes makes the
      // client see a reset instead of the status, which is not what these tests are about.
      if (isTranscription && method === "POST") await readForm(req, entry);
      else req.resume();

      const auth = authFailure(bearer);
      if (auth) throw new FakeHttpError(auth);
      const failure = state.failures.shift() ?? state.failAlways;
      if (failure) throw new FakeHttpError(failure);
      if (state.hang) return; // never answered

      if (entry.path === "/v1/models") {
        if (!state.modelsEndpoint) throw new FakeHttpError({ status: 404, message: "Not Found" });
        if (method !== "GET") throw new FakeHttpError({ status: 405, message: "Method Not Allowed" });
        return sendJson(res, 200, {
          object: "list",
          data: models.map((id) => ({ id, object: "model", created: 1_700_000_000, owned_by: "system" })),
        });
      }
      if (!isTranscription) throw new FakeHttpError({ status: 404, message: "Not Found" });
      if (method !== "POST") throw new FakeHttpError({ status: 405, message: "Method Not Allowed" });
      transcribe(res, entry);
    } catch (error) {
      const failure = error instanceof FakeHttpError ? error.failure : { status: 500, message: "Internal error" };
      if (!res.headersSent) sendFailure(res, failure);
      else res.destroy();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(state, { url: `http://127.0.0.1:${port}/v1` });
  return state;
}
