import { z } from "zod";

import { classifyHttpFailure, fetchWithTimeout, withRetries, type RetryPolicy } from "../speech/retry";
import { SpeechEngineError } from "../speech/types";
import { LiveEngineError } from "./engine-types";

// The direct mode's short-lived key (PROTOCOLS.md §2): the browser opens wss://…/v2?jwt=<key> itself, so the
// server asks the management API for a temporary realtime key with the long-lived one, which never leaves the
// server. Neither key is logged or put into an error message. The key is good for any number of sessions
// until it expires, so a request that is retried after its answer was lost costs nothing but a spare key.

export type RealtimeToken = { jwt: string; expiresAt: Date };

export type RealtimeTokenOptions = {
  apiKey: string | undefined;
  /** e.g. https://mp.speechmatics.com/v1 */
  managementUrl: string;
  /** 60–86400; the SDKs' 60 s by default: long enough to open the socket, short enough to be worthless later. */
  ttlSeconds?: number;
  timeoutMs?: number;
  retry?: RetryPolicy;
  signal?: AbortSignal;
};

const DEFAULT_TTL_SECONDS = 60;
const DEFAULT_TIMEOUT_MS = 10_000;
/** A clinician waits on this before recording starts: few, short retries. */
const TOKEN_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 300, maxDelayMs: 2_000 };

const answerSchema = z.object({ key_value: z.string().min(1) });

function hostOf(url: string) {
  try {
    return new URL(url).host;
  } catch {
    return "Speechmatics";
  }
}

/** The caller's view of a failed attempt: a LiveEngineError whose type the client can act on. */
function liveError(error: unknown): unknown {
  if (!(error instanceof SpeechEngineError)) return error;
  const { status } = error.options;
  if (status === 401 || status === 403)
    return new LiveEngineError(
      "not_authorised",
      `Speechmatics rejected the API key (HTTP ${status}) when asked for a temporary key`,
      { cause: error },
    );
  const transient = error.kind === "transient";
  if (status === 429) return new LiveEngineError("quota_exceeded", error.message, { transient, cause: error });
  return new LiveEngineError("engine_unavailable", error.message, { transient, cause: error });
}

/** A temporary realtime key from `POST {managementUrl}/api_keys?type=rt`, with its expiry. */
export async function createRealtimeToken(options: RealtimeTokenOptions): Promise<RealtimeToken> {
  const apiKey = options.apiKey?.trim();
  if (!apiKey) throw new LiveEngineError("engine_unavailable", "Speechmatics has no API key (SPEECHMATICS_API_KEY)");
  const url = `${options.managementUrl.replace(/\/+$/, "")}/api_keys?type=rt`;
  const host = hostOf(url);
  const ttl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  const { signal } = options;

  async function attempt(): Promise<RealtimeToken> {
    // The expiry counts from before the request, so it is never later than the one Speechmatics set.
    const asked = Date.now();
    const response = await fetchWithTimeout(url, {
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ ttl }),
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal,
    });
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      throw new SpeechEngineError("transient", `The answer from ${host} broke off`, { cause });
    }
    if (response.status < 200 || response.status >= 300) {
      const failure = classifyHttpFailure(response, text);
      const error = new SpeechEngineError(
        failure.kind,
        `Speechmatics answered HTTP ${response.status} when asked for a temporary key at ${host}`,
        { status: response.status },
      );
      throw failure.retryAfterMs === undefined ? error : Object.assign(error, { retryAfterMs: failure.retryAfterMs });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (cause) {
      throw new SpeechEngineError("transient", `Speechmatics sent unreadable JSON for a temporary key`, { cause });
    }
    const parsed = answerSchema.safeParse(body);
    if (!parsed.success)
      throw new SpeechEngineError("transient", "Speechmatics sent a temporary key answer without key_value");
    return { jwt: parsed.data.key_value, expiresAt: new Date(asked + ttl * 1000) };
  }

  try {
    return await withRetries(attempt, { policy: options.retry ?? TOKEN_RETRY, signal });
  } catch (error) {
    throw liveError(error);
  }
}
