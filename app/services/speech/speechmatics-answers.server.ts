import type { z } from "zod";
import { SpeechEngineError } from "./types";

// Reading Speechmatics' answers (PROTOCOLS.md §1): a non-2xx status becomes a transient or permanent engine
// error that never holds the key, a 2xx body is JSON checked against its schema (unreadable or unexpected:
// transient). Speechmatics sends no Retry-After on 429; when some proxy does, it is honoured. 401 may arrive as
// an nginx HTML page, so error bodies are read as JSON only when they parse.

export type Answer = { status: number; headers: { get(name: string): string | null }; text: string };

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
export function httpError(answer: Answer, what: string): SpeechEngineError {
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

export function parseJson<T>(answer: Answer, schema: z.ZodType<T>, what: string): T {
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
