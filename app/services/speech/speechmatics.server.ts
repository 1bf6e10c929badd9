import { openAsBlob } from "node:fs";

import { FormData } from "undici";

import { DEFAULT_RETRY, fetchWithTimeout, withRetries, type RetryPolicy } from "./retry";
import { httpError, parseJson, type Answer } from "./speechmatics-answers.server";
import {
  createdSchema,
  jobConfig,
  jobSchema,
  speechmaticsWords,
  transcriptSchema,
  type JobDetails,
  type Transcript,
} from "./speechmatics-format.server";
import {
  SpeechEngineError,
  type EngineHealth,
  type EngineResult,
  type SpeechEngine,
  type SpeechRequest,
} from "./types";

// The Speechmatics Batch API v2 (PROTOCOLS.md §1): upload the WAV as a job, poll its status, fetch the
// json-v2 transcript, delete the job so neither audio nor text stays at the vendor. Every call is bounded by
// a time-out and retried only on transient failures (network, time-out, 5xx, 429, an unreadable answer), as
// speechmatics-answers.server.ts reads them; what is sent and received is in speechmatics-format.server.ts.

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
const TERMINAL = new Set(["done", "rejected", "deleted", "expired"]);

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
