import { fetch, type RequestInit, type Response } from "undici";
import { LlmError } from "../llm/types";
import { SpeechEngineError } from "./types";

// Bounded retries with exponential backoff and jitter for one engine call. Only transient failures are
// retried; the caller's signal stops both the wait and the next attempt. Shared by the speech engines and the
// language-model engines (`llm/`): both error classes carry the same `kind`, and fetchWithTimeout makes
// whichever class its caller names.

export type RetryPolicy = { attempts: number; baseDelayMs: number; maxDelayMs: number };

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 500, maxDelayMs: 8_000 };

function delay(ms: number, signal?: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** `retryAfterMs` from an error, when the server named a wait (Retry-After, retry-after-ms). */
export function retryAfterOf(error: unknown): number | undefined {
  const value = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof value === "number" && value >= 0 && value <= 60_000 ? value : undefined;
}

export async function withRetries<T>(
  run: (attempt: number) => Promise<T>,
  options: { policy?: RetryPolicy; signal?: AbortSignal; onRetry?: (error: unknown, attempt: number) => void } = {},
): Promise<T> {
  const policy = options.policy ?? DEFAULT_RETRY;
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(attempt);
    } catch (error) {
      const transient = (error instanceof SpeechEngineError || error instanceof LlmError) && error.kind === "transient";
      if (!transient || attempt >= policy.attempts || options.signal?.aborted) throw error;
      options.onRetry?.(error, attempt);
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      const wait = retryAfterOf(error) ?? backoff / 2 + Math.random() * (backoff / 2);
      await delay(wait, options.signal);
    }
  }
}

/** Makes the error a failed fetch turns into: SpeechEngineError by default, LlmError for the language models. */
export type EngineErrorFactory = (
  kind: "transient" | "permanent",
  message: string,
  options: { cause: unknown },
) => Error;

const speechError: EngineErrorFactory = (kind, message, options) => new SpeechEngineError(kind, message, options);

/**
 * A fetch with a time-out that also honours the caller's signal; network failures become transient.
 * undici's own fetch (and its FormData), not the global one: remix-serve replaces the global fetch with
 * a polyfill that handles multipart bodies and streams differently from Node's.
 */
export async function fetchWithTimeout(
  url: string,
  init: RequestInit & { timeoutMs: number; signal?: AbortSignal; upload?: boolean; makeError?: EngineErrorFactory },
): Promise<Response> {
  const { timeoutMs, signal, upload, makeError = speechError, ...rest } = init;
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    // An upload refuses redirects outright: to follow one, undici keeps a copy of the whole body in
    // memory (nodejs/undici#4058) — hundreds of MB for a long recording.
    return await fetch(url, {
      ...rest,
      signal: combined,
      redirect: upload ? "error" : "manual",
      ...(upload ? { window: null } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    if (upload && (error as { cause?: { message?: unknown } }).cause?.message === "unexpected redirect") {
      throw makeError("permanent", `${new URL(url).host} answered the upload with a redirect`, { cause: error });
    }
    if (timeout.aborted) {
      throw makeError("transient", `No answer from ${new URL(url).host} within ${timeoutMs} ms`, { cause: error });
    }
    throw makeError("transient", `Cannot reach ${new URL(url).host}`, { cause: error });
  }
}

// ---- Reading a server's refusal --------------------------------------------------------------------------

export type ErrorBodyInfo = { message?: string; type?: string; code?: string };

function plainText(text: string) {
  return text
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

function asString(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return undefined;
}

/**
 * The message, type and code of every error body OpenAI-compatible servers send (PROTOCOLS.md §3.3, §3.4):
 * OpenAI's {"error":{…}}, vLLM's flat {"object":"error",…,"code":<int>}, llama.cpp's {"error":{code,message,type}},
 * FastAPI's {"detail"} (a string or a list of validation errors), and HTML or plain text from a proxy.
 */
export function errorBodyInfo(body: string): ErrorBodyInfo {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { message: plainText(body) || undefined };
  }
  if (typeof json !== "object" || json === null) return { message: plainText(body) || undefined };
  const object = json as Record<string, unknown>;
  if (typeof object.error === "object" && object.error !== null) {
    const error = object.error as Record<string, unknown>;
    return { message: asString(error.message), type: asString(error.type), code: asString(error.code) };
  }
  if (typeof object.error === "string") return { message: object.error };
  if (object.detail !== undefined) {
    const { detail } = object;
    if (typeof detail === "string") return { message: detail };
    if (Array.isArray(detail)) {
      const messages = detail.map((d) => asString((d as Record<string, unknown> | null)?.msg)).filter(Boolean);
      return { message: messages.join("; ") || undefined };
    }
  }
  return { message: asString(object.message), type: asString(object.type), code: asString(object.code) };
}

/** openai-node's order: retry-after-ms, then Retry-After as seconds or an HTTP date; only 0–60 s counts. */
export function retryAfterHeader(headers: { get(name: string): string | null }): number | undefined {
  const candidates: number[] = [];
  const ms = headers.get("retry-after-ms");
  if (ms) candidates.push(Number.parseFloat(ms));
  const header = headers.get("retry-after");
  if (header) {
    const secondsValue = Number.parseFloat(header);
    candidates.push(Number.isNaN(secondsValue) ? Date.parse(header) - Date.now() : secondsValue * 1000);
  }
  return candidates.find((value) => Number.isFinite(value) && value >= 0 && value <= 60_000);
}

export type HttpFailure = {
  kind: "transient" | "permanent";
  status: number;
  info: ErrorBodyInfo;
  /** A 429 for an exhausted quota (OpenAI's `insufficient_quota`). */
  quota: boolean;
  /** The server's wait, for a transient failure (0–60 s). */
  retryAfterMs?: number;
};

/**
 * openai-node's reading of an error answer (PROTOCOLS.md §3.3): 408, 409, 429 and 5xx are transient, other
 * statuses permanent; `x-should-retry: true|false` overrides that; an exhausted quota is permanent whatever the
 * headers say (it stays exhausted).
 */
export function classifyHttpFailure(
  response: { status: number; headers: { get(name: string): string | null } },
  body: string,
): HttpFailure {
  const { status } = response;
  const info = errorBodyInfo(body);
  const quota = info.type === "insufficient_quota" || info.code === "insufficient_quota";
  let kind: "transient" | "permanent" =
    status === 408 || status === 409 || status === 429 || status >= 500 ? "transient" : "permanent";
  const shouldRetry = response.headers.get("x-should-retry");
  if (shouldRetry === "true") kind = "transient";
  if (shouldRetry === "false") kind = "permanent";
  if (quota) kind = "permanent";
  const retryAfterMs = kind === "transient" ? retryAfterHeader(response.headers) : undefined;
  return { kind, status, info, quota, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

/**
 * A vendor's error message as it may be shown and logged: the API key cut out, even in the masked form OpenAI echoes
 * back, and at most 300 characters.
 */
export function redactApiKey(text: string, apiKey: string | undefined) {
  const clean = apiKey && apiKey.length >= 4 ? text.split(apiKey).join("***") : text;
  return clean.length > 300 ? `${clean.slice(0, 300)}…` : clean;
}

/** An engine's error class (SpeechEngineError, LlmError) as httpErrorFactory makes it. */
export type HttpErrorClass<E extends Error> = new (
  kind: "transient" | "permanent",
  message: string,
  options: { status: number; userMessageKey?: string; retryAfterMs?: number },
) => E;

/** What an OpenAI-compatible client says about a refused request beyond the status and the server's words. */
export type HttpErrorWording = {
  host: string;
  apiKey: string | undefined;
  /** The settings to check: the key, the address, and what to check on a 404 (the address and the model). */
  settings: { apiKey: string; url: string; notFound: string };
  /** The i18n key a clinician sees for a refused key or a used-up quota: the administrator's to fix. */
  notConfiguredKey: string;
  /** This client's own reading of a status, after a refused key and a used-up quota; undefined for the usual one. */
  special?: (status: number, detail: string, said: string) => string | undefined;
};

/**
 * How an OpenAI-compatible client turns an error answer into its engine's error: classified as openai-node does
 * (classifyHttpFailure), the server's message with the key cut out ("status: detail"), the setting to check named.
 */
export function httpErrorFactory<E extends Error>(ErrorClass: HttpErrorClass<E>, wording: HttpErrorWording) {
  const { host, apiKey, settings, notConfiguredKey, special } = wording;

  function messageFor(status: number, quota: boolean, detail: string): string {
    const said = detail ? `: ${detail}` : "";
    if (status === 401 || status === 403) {
      return apiKey
        ? `${host} refused the API key (${status})${said}. Check ${settings.apiKey}.`
        : `${host} requires an API key (${status})${said}. Set ${settings.apiKey}.`;
    }
    if (quota) return `${host}: the account's quota is used up (${status})${said}`;
    const own = special?.(status, detail, said);
    if (own !== undefined) return own;
    if (status === 404) return `${host} answered 404${said}. Check ${settings.notFound}.`;
    if (status >= 300 && status < 400) {
      return `${host} redirected the request (${status}); set ${settings.url} to the final address.`;
    }
    return `${host} answered ${status}${said}`;
  }

  return function httpError(response: Response, body: string): E {
    const { kind, status, info, quota, retryAfterMs } = classifyHttpFailure(response, body);
    const message = messageFor(status, quota, redactApiKey(info.message ?? response.statusText ?? "", apiKey));
    // A refused key or a used-up quota is the administrator's to fix, whatever the clinician tries.
    const userMessageKey = status === 401 || status === 403 || quota ? notConfiguredKey : undefined;
    const options = { status, ...(userMessageKey ? { userMessageKey } : {}) };
    if (retryAfterMs === undefined) return new ErrorClass(kind, message, options);
    // LlmError keeps the server's wait among its options; SpeechEngineError carries it as a property of its own,
    // as Speechmatics' errors do. retryAfterOf finds it either way.
    if ("retryAfterMs" in ErrorClass.prototype) return new ErrorClass(kind, message, { ...options, retryAfterMs });
    return Object.assign(new ErrorClass(kind, message, options), { retryAfterMs });
  };
}
