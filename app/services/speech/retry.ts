import { fetch, type RequestInit, type Response } from "undici";
import { SpeechEngineError } from "./types";

// Bounded retries with exponential backoff and jitter for one engine call. Only transient failures are
// retried; the caller's signal stops both the wait and the next attempt.

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
      const transient = error instanceof SpeechEngineError && error.kind === "transient";
      if (!transient || attempt >= policy.attempts || options.signal?.aborted) throw error;
      options.onRetry?.(error, attempt);
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      const wait = retryAfterOf(error) ?? backoff / 2 + Math.random() * (backoff / 2);
      await delay(wait, options.signal);
    }
  }
}

/**
 * A fetch with a time-out that also honours the caller's signal; network failures become transient.
 * undici's own fetch (and its FormData), not the global one: remix-serve replaces the global fetch with
 * a polyfill that handles multipart bodies and streams differently from Node's.
 */
export async function fetchWithTimeout(
  url: string,
  init: RequestInit & { timeoutMs: number; signal?: AbortSignal; upload?: boolean },
): Promise<Response> {
  const { timeoutMs, signal, upload, ...rest } = init;
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
      throw new SpeechEngineError("permanent", `${new URL(url).host} answered the upload with a redirect`, {
        cause: error,
      });
    }
    if (timeout.aborted) {
      throw new SpeechEngineError("transient", `No answer from ${new URL(url).host} within ${timeoutMs} ms`, {
        cause: error,
      });
    }
    throw new SpeechEngineError("transient", `Cannot reach ${new URL(url).host}`, { cause: error });
  }
}
