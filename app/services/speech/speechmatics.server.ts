import { openAsBlob } from "node:fs";

import { FormData } from "undici";
import { z } from "zod";

import { DEFAULT_RETRY, fetchWithTimeout, withRetries, type RetryPolicy } from "./retry";
import {
  SpeechEngineError,
  type EngineHealth,
  type EngineResult,
  type EngineWord,
  type SpeechEngine,
  type SpeechRequest,
  type VocabularyEntry,
} from "./types";

// The Speechmatics Batch API v2 (PROTOCOLS.md §1): upload the WAV as a job, poll its status, fetch the
// json-v2 transcript, delete the job so neither audio nor text stays at the vendor. Every call is bounded by
// a time-out and retried only on transient failures (network, time-out, 5xx, 429, an unreadable answer).
// Speechmatics sends no Retry-After on 429; when some proxy does, it is honoured. 401 may arrive as an
// nginx HTML page, so error bodies are read as JSON only when they parse.

export type SpeechmaticsConfig = {
  /** Missing → transcribe() fails with "not_configured" and check() says so; nothing is sent. */
  apiKey: string | undefined;
  /** e.g. https://eu1.asr.api.speechmatics.com/v2 — every call for a job must use the region that made it. */
  batchUrl: string;
  /** Least time between two status polls; each poll also asks the server to hold it up to this long. */
  pollIntervalMs?: number;
  /** Bound on the whole job; 30 min + twice the audio's duration by default. */
  maxWaitMs?: number;
  /** Time-out of each call except the upload. */
  requestTimeoutMs?: number;
  /** Time-out of the upload (POST /jobs). */
  uploadTimeoutMs?: number;
  retry?: RetryPolicy;
};

const DEFAULT_POLL_INTERVAL_MS = 5_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_UPLOAD_TIMEOUT_MS = 10 * 60_000;
const DELETE_TIMEOUT_MS = 15_000;
/** Speechmatics' limit on additional_vocab entries. */
const MAX_VOCABULARY = 1_000;
const TERMINAL = new Set(["done", "rejected", "deleted", "expired"]);

const createdSchema = z.object({ id: z.string().min(1) });

const jobSchema = z.object({
  job: z.object({
    status: z.string(),
    duration: z.number().nonnegative().optional(),
    errors: z.array(z.object({ message: z.string() }).passthrough()).optional(),
  }),
});
type JobDetails = z.infer<typeof jobSchema>["job"];

const alternativeSchema = z.object({
  content: z.string(),
  confidence: z.number(),
  speaker: z.string().optional(),
});
/** word and punctuation results; other types (entity, anything newer) are ignored unchecked. */
const tokenSchema = z.object({
  type: z.enum(["word", "punctuation"]),
  start_time: z.number(),
  end_time: z.number(),
  is_eos: z.boolean().optional(),
  attaches_to: z.enum(["previous", "next", "both", "none"]).optional(),
  alternatives: z.array(alternativeSchema).min(1),
});
type Token = z.infer<typeof tokenSchema>;

const transcriptSchema = z.object({
  format: z.string(),
  job: z.object({ duration: z.number().nonnegative().optional() }).passthrough(),
  metadata: z
    .object({ transcription_config: z.object({ language: z.string().optional() }).passthrough().optional() })
    .passthrough(),
  results: z.array(
    z.union([tokenSchema, z.object({ type: z.string().refine((t) => t !== "word" && t !== "punctuation") })]),
  ),
});
type Transcript = z.infer<typeof transcriptSchema>;

type Answer = { status: number; headers: { get(name: string): string | null }; text: string };

function pause(ms: number, signal?: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Retry-After as seconds or an HTTP date, in ms; undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** "error: detail" from a Speechmatics JSON error body; nothing from HTML or other text. */
function vendorReason(text: string): string | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body !== "object" || body === null) return undefined;
    const { error, detail } = body as { error?: unknown; detail?: unknown };
    const parts = [error, detail].filter((p): p is string => typeof p === "string" && p.length > 0);
    return parts.length > 0 ? parts.join(": ").slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}

/** The error for a non-2xx answer; `what` names the call ("creating the job"). Never holds the key. */
function httpError(answer: Answer, what: string): SpeechEngineError {
  const { status } = answer;
  const reason = vendorReason(answer.text);
  const requestId = answer.headers.get("request-id");
  const suffix = `${reason ? ` (${reason})` : ""}${requestId ? ` [Request-Id ${requestId}]` : ""}`;
  if (status === 401)
    return new SpeechEngineError("permanent", `Speechmatics rejected the API key (HTTP 401) while ${what}${suffix}`, {
      status,
    });
  if (status === 403)
    return new SpeechEngineError(
      "permanent",
      `Speechmatics refused access (HTTP 403; key expired or feature not entitled) while ${what}${suffix}`,
      { status },
    );
  if (status === 429 || status >= 500) {
    const error = new SpeechEngineError("transient", `Speechmatics answered HTTP ${status} while ${what}${suffix}`, {
      status,
    });
    const wait = retryAfterMs(answer.headers.get("retry-after"));
    return wait === undefined ? error : Object.assign(error, { retryAfterMs: wait });
  }
  if (status >= 300 && status < 400)
    return new SpeechEngineError("permanent", `Speechmatics answered with a redirect (HTTP ${status}) while ${what}`, {
      status,
    });
  return new SpeechEngineError("permanent", `Speechmatics answered HTTP ${status} while ${what}${suffix}`, { status });
}

function parseJson<T>(answer: Answer, schema: z.ZodType<T>, what: string): T {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch (cause) {
    throw new SpeechEngineError("transient", `Speechmatics sent unreadable JSON while ${what}`, { cause });
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SpeechEngineError(
      "transient",
      `Speechmatics sent an unexpected answer while ${what} (${issue.path.join(".") || "body"}: ${issue.message})`,
      { cause: parsed.error },
    );
  }
  return parsed.data;
}

/** Speechmatics' additional_vocab: non-empty entries only, at most 1000, sounds_like only when given. */
export function speechmaticsVocabulary(entries: VocabularyEntry[]): VocabularyEntry[] {
  const vocabulary: VocabularyEntry[] = [];
  for (const entry of entries) {
    const content = entry.content.trim();
    if (!content) continue;
    const soundsLike = (entry.sounds_like ?? []).map((s) => s.trim()).filter(Boolean);
    vocabulary.push(soundsLike.length > 0 ? { content, sounds_like: soundsLike } : { content });
    if (vocabulary.length === MAX_VOCABULARY) break;
  }
  return vocabulary;
}

function jobConfig(request: SpeechRequest) {
  const vocabulary = speechmaticsVocabulary(request.vocabulary);
  return {
    type: "transcription",
    transcription_config: {
      language: request.language,
      operating_point: "enhanced",
      diarization: "speaker",
      ...(vocabulary.length > 0 ? { additional_vocab: vocabulary } : {}),
    },
  };
}

function clamp01(value: number) {
  return Math.min(1, Math.max(0, value));
}

function speakerOf(token: Token): string | null {
  const speaker = token.alternatives[0].speaker;
  return speaker && speaker !== "UU" ? speaker : null;
}

/**
 * json-v2 results as engine words. Punctuation attached to the word before it ("previous", "both", or no
 * attaches_to) is a punctuation token; an opening mark ("next", such as „) is glued to the front of the
 * following word, since EngineWord cannot attach forwards; a free-standing mark ("none") stays a token of
 * its own. Entities (we never set enable_entities) and unknown types are skipped, as the spec asks.
 */
export function speechmaticsWords(results: Transcript["results"]): EngineWord[] {
  const words: EngineWord[] = [];
  // Opening marks waiting for their word.
  let opening = "";
  let openingStart = 0;
  for (const result of results) {
    const parsed = tokenSchema.safeParse(result);
    if (!parsed.success) continue;
    const token = parsed.data;
    const alternative = token.alternatives[0];
    const word: EngineWord = {
      text: alternative.content,
      start: token.start_time,
      end: token.end_time,
      confidence: clamp01(alternative.confidence),
      speaker: speakerOf(token),
    };
    const attaches = token.type === "word" ? "word" : (token.attaches_to ?? "previous");
    if (attaches === "next") {
      if (!opening) openingStart = word.start;
      opening += word.text;
      continue;
    }
    if (opening && attaches === "word") {
      word.text = opening + word.text;
      word.start = Math.min(openingStart, word.start);
    } else if (opening) {
      words.push({ ...word, text: opening, start: openingStart, end: openingStart });
    }
    opening = "";
    if (attaches === "word") words.push(word);
    else if (attaches === "none") words.push(token.is_eos === true ? { ...word, endOfSentence: true } : word);
    else words.push({ ...word, punctuation: true, endOfSentence: token.is_eos === true });
  }
  if (opening) words.push({ text: opening, start: openingStart, end: openingStart, confidence: 1, speaker: null });
  return words;
}

export function createSpeechmaticsEngine(config: SpeechmaticsConfig): SpeechEngine {
  const apiKey = config.apiKey?.trim() || undefined;
  const base = config.batchUrl.replace(/\/+$/, "");
  const host = (() => {
    try {
      return new URL(base).host;
    } catch {
      return "Speechmatics";
    }
  })();
  const policy = config.retry ?? DEFAULT_RETRY;
  const pollIntervalMs = config.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const requestTimeoutMs = config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const uploadTimeoutMs = config.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS;

  async function call(
    method: "GET" | "POST" | "DELETE",
    path: string,
    options: { timeoutMs: number; signal?: AbortSignal; body?: FormData },
  ): Promise<Answer> {
    const url = `${base}${path}`;
    const headers = { Authorization: `Bearer ${apiKey}`, Accept: "application/json" };
    const { timeoutMs, signal, body } = options;
    // A body is the WAV: sent as an upload, which refuses redirects rather than buffering it (retry.ts).
    const response = await fetchWithTimeout(url, { method, headers, body, timeoutMs, signal, upload: Boolean(body) });
    try {
      // The time-out given to fetch also covers reading the body.
      return { status: response.status, headers: response.headers, text: await response.text() };
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      throw new SpeechEngineError("transient", `The answer from ${host} broke off`, { cause });
    }
  }

  async function createJob(request: SpeechRequest, audio: Blob): Promise<string> {
    const what = "creating the job";
    const form = new FormData();
    form.append("config", JSON.stringify(jobConfig(request)));
    form.append("data_file", audio, "audio.wav");
    const answer = await call("POST", "/jobs", { body: form, timeoutMs: uploadTimeoutMs, signal: request.signal });
    if (answer.status < 200 || answer.status >= 300) throw httpError(answer, what);
    try {
      return parseJson(answer, createdSchema, what).id;
    } catch (error) {
      // The job may exist; another POST would make (and bill) a second one.
      throw new SpeechEngineError("permanent", (error as Error).message, { cause: error });
    }
  }

  async function jobStatus(id: string, waitSeconds: number, signal?: AbortSignal): Promise<JobDetails> {
    const what = `polling job ${id}`;
    const answer = await call("GET", `/jobs/${encodeURIComponent(id)}?wait=${waitSeconds}`, {
      timeoutMs: requestTimeoutMs + waitSeconds * 1000,
      signal,
    });
    if (answer.status !== 200) throw httpError(answer, what);
    return parseJson(answer, jobSchema, what).job;
  }

  async function transcript(id: string, signal?: AbortSignal): Promise<Transcript> {
    const what = `fetching the transcript of job ${id}`;
    const answer = await call("GET", `/jobs/${encodeURIComponent(id)}/transcript?format=json-v2`, {
      timeoutMs: requestTimeoutMs,
      signal,
    });
    if (answer.status !== 200) throw httpError(answer, what);
    return parseJson(answer, transcriptSchema, what);
  }

  /** Best effort, without the caller's signal (it may be what aborted us); a failure is only logged. */
  async function deleteJob(id: string, force: boolean) {
    try {
      await withRetries(
        async () => {
          const answer = await call("DELETE", `/jobs/${encodeURIComponent(id)}${force ? "?force=true" : ""}`, {
            timeoutMs: Math.min(requestTimeoutMs, DELETE_TIMEOUT_MS),
          });
          if (answer.status !== 200 && answer.status !== 404) throw httpError(answer, `deleting job ${id}`);
        },
        { policy },
      );
    } catch (error) {
      console.warn(
        `[speechmatics] job ${id} could not be deleted; it stays at Speechmatics until its retention ends:`,
        error instanceof Error ? error.message : error,
      );
    }
  }

  async function waitForJob(id: string, deadline: number, maxWaitMs: number, signal?: AbortSignal) {
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new SpeechEngineError(
          "transient",
          `Speechmatics job ${id} did not finish within ${Math.round(maxWaitMs / 1000)} s`,
        );
      }
      // Long-poll: the server may hold the answer up to `wait` s and answers early when the job ends.
      const waitSeconds = Math.max(0, Math.min(Math.floor(pollIntervalMs / 1000), Math.floor(remaining / 1000)));
      const asked = Date.now();
      const job = await withRetries(() => jobStatus(id, waitSeconds, signal), { policy, signal });
      if (TERMINAL.has(job.status)) return job;
      const rest = Math.min(pollIntervalMs - (Date.now() - asked), deadline - Date.now());
      if (rest > 0) await pause(rest, signal);
    }
  }

  return {
    name: "speechmatics",

    async transcribe(request) {
      if (!apiKey) throw new SpeechEngineError("not_configured", "Speechmatics has no API key (SPEECHMATICS_API_KEY)");
      const { signal } = request;
      signal?.throwIfAborted();
      const maxWaitMs = config.maxWaitMs ?? 30 * 60_000 + 2 * request.durationSeconds * 1000;
      const deadline = Date.now() + maxWaitMs;
      let audio: Blob;
      try {
        // File-backed: the multipart body streams from disk instead of holding the WAV in memory.
        audio = await openAsBlob(request.file, { type: "audio/wav" });
      } catch (cause) {
        throw new SpeechEngineError("permanent", "The audio file for Speechmatics cannot be read", { cause });
      }

      const id = await withRetries(() => createJob(request, audio), { policy, signal });
      // Until the job has ended, deleting it needs force; once Speechmatics deleted or expired it, nothing is left.
      let cleanup: "force" | "plain" | "none" = "force";
      try {
        const job = await waitForJob(id, deadline, maxWaitMs, signal);
        cleanup = job.status === "deleted" || job.status === "expired" ? "none" : "plain";
        if (job.status === "rejected") {
          const reasons = (job.errors ?? []).map((e) => e.message).filter(Boolean);
          throw new SpeechEngineError(
            "permanent",
            `Speechmatics rejected job ${id}: ${reasons.join("; ") || "no reason given"}`,
          );
        }
        if (job.status !== "done") {
          throw new SpeechEngineError("permanent", `Speechmatics job ${id} was ${job.status} before it finished`);
        }
        const result = await withRetries(() => transcript(id, signal), { policy, signal });
        const language = result.metadata.transcription_config?.language;
        return {
          engine: "speechmatics",
          language: language && language.length >= 2 ? language : request.language,
          // What Speechmatics bills on; a missing or zero figure falls back to our own measurement.
          audioSeconds: result.job.duration || job.duration || request.durationSeconds,
          words: speechmaticsWords(result.results),
        } satisfies EngineResult;
      } finally {
        if (cleanup !== "none") await deleteJob(id, cleanup === "force");
      }
    },

    async check(timeoutMs = 5_000): Promise<EngineHealth> {
      if (!apiKey) return { status: "not_configured", detail: "Speechmatics has no API key" };
      try {
        const answer = await call("GET", "/jobs?limit=1", { timeoutMs });
        if (answer.status === 200) return { status: "healthy" };
        return { status: "error", detail: httpError(answer, "checking the API key").message };
      } catch (error) {
        return {
          status: "error",
          detail: error instanceof SpeechEngineError ? error.message : `Cannot reach ${host}`,
        };
      }
    },
  };
}
