import { LIVE_CONNECT_TIMEOUT_MS, LIVE_SETTINGS, type LiveKind, type LiveLanguage } from "../protocol";
import type { DirectTarget } from "./link";
import { LiveError, type LiveFailure } from "./messages";

// The live session's HTTP calls (same origin, session cookie; errors are {"detail": "..."}), and the
// upload of the recorder's compressed copy with SPEC §7's retries.

/** The server's call that files the uploaded copy as the recording's audio (name kept in one place). */
export const CONFIRM_AUDIO_PATH = "/api/confirm-realtime-audio";
/** SPEC §7 "Upload retries": waits before the 2nd, 3rd and 4th attempt; 60 s per attempt. */
export const UPLOAD_RETRY_DELAYS_MS = [1_000, 2_000, 4_000];
export const UPLOAD_ATTEMPT_TIMEOUT_MS = 60_000;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail || `HTTP ${status}`);
    this.name = "HttpError";
  }
  /** Worth another attempt: no answer (status 0), a time-out, 5xx or 429. */
  get transient() {
    return this.status === 0 || this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

export async function request(
  path: string,
  init: { method?: string; json?: unknown; body?: BodyInit; type?: string; timeoutMs?: number } = {},
): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), init.timeoutMs ?? 30_000);
  let response: Response;
  try {
    response = await fetch(path, {
      method: init.method ?? (init.json === undefined && init.body === undefined ? "GET" : "POST"),
      credentials: "same-origin",
      headers: {
        Accept: "application/json",
        ...(init.json !== undefined
          ? { "Content-Type": "application/json" }
          : init.type
            ? { "Content-Type": init.type }
            : {}),
      },
      body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
      signal: controller.signal,
    });
  } catch {
    throw new HttpError(0, "");
  } finally {
    clearTimeout(timer);
  }
  const body = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) throw new HttpError(response.status, typeof body?.detail === "string" ? body.detail : "");
  return body;
}

/** Runs `attempt` again after each delay while its error is transient (SPEC §7 upload retries). */
export async function withRetries<T>(attempt: () => Promise<T>, delays = UPLOAD_RETRY_DELAYS_MS): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof HttpError && error.transient) || tries >= delays.length) throw error;
      await new Promise((resolve) => setTimeout(resolve, delays[tries]));
    }
  }
}

function startFailure(error: unknown): LiveFailure {
  if (error instanceof HttpError && (error.status === 401 || error.status === 403)) return { key: "authFailed" };
  return { key: "startFailed" };
}

/**
 * `language`: the session's own, when the server said (a continued session must keep it). `direct`: direct mode
 * — no session on the server (its `id` is empty); the page keeps what is recognised and saves it itself.
 */
export type SessionInfo = {
  id: string;
  maxDelay: number;
  lastN: number;
  language?: LiveLanguage;
  direct?: DirectTarget;
};

type Created = { id?: string | null; mode?: string; max_delay?: number; direct?: DirectTarget } | null;

/** `consent`: the patient's consent to a recording (issue 22), confirmed before the first buffer. */
export async function createSession(
  kind: LiveKind,
  language: LiveLanguage,
  consent?: LiveConsent,
): Promise<SessionInfo> {
  try {
    const body = (await request("/live/sessions", {
      json: { kind, language, ...(consent ? { consent } : {}) },
      timeoutMs: LIVE_CONNECT_TIMEOUT_MS[kind],
    })) as Created;
    const maxDelay = body?.max_delay ?? LIVE_SETTINGS[kind].maxDelay;
    if (body?.mode === "direct" && body.direct?.url && body.direct.start) {
      return { id: "", maxDelay, lastN: 0, direct: { url: body.direct.url, start: body.direct.start } };
    }
    if (!body?.id) throw new HttpError(200, "");
    return { id: body.id, maxDelay, lastN: 0 };
  } catch (error) {
    throw new LiveError(startFailure(error));
  }
}

export type LiveConsent = { kind: string; given_by: string };

export type SessionView = {
  id: string;
  language?: string;
  status: string;
  buffers: number;
  seconds: number;
  last_n: number;
  transcript: Array<{ speaker: string; text: string; start: number; end: number }>;
  /** Recorded while the speech model was downloading: saved without text and transcribed afterwards. */
  transcribe_later?: boolean;
};

export async function getSession(id: string): Promise<SessionView> {
  return (await request(`/live/sessions/${encodeURIComponent(id)}`)) as SessionView;
}

/** An unfinished session taken up again: the server's count of messages, so none are shown twice. */
export async function resumeSession(kind: LiveKind, id: string): Promise<SessionInfo> {
  try {
    const view = await getSession(id);
    const language = view.language === "en" || view.language === "de" ? view.language : undefined;
    return { id, maxDelay: LIVE_SETTINGS[kind].maxDelay, lastN: view.last_n ?? 0, language };
  } catch (error) {
    throw new LiveError(startFailure(error));
  }
}

export async function discardSession(id: string) {
  await request(`/live/sessions/${encodeURIComponent(id)}/discard`, { method: "POST" });
}

export type SavePayload = {
  template_id: string;
  transcription_mode: "transcript" | "transcript_and_letter";
  additional_context?: string;
  original_mime_type?: string;
  audio_copy: boolean;
  /** The patient's consent (issue 22); a relayed session was started with it already. */
  consent?: LiveConsent;
};
export type Saved = { transcript_key: string; audio_key: string; recording_key: string };

/**
 * The server encodes the session's audio while the save waits: about 1.5 s per recorded minute (bench/live-relay.mjs,
 * 45 minutes in 67 s), so the wait grows with the recording — 2 minutes plus 3 s a minute, 14 minutes at the 4 h cap.
 */
export function saveTimeoutMs(seconds: number) {
  return 120_000 + Math.ceil(Math.max(0, seconds) / 60) * 3_000;
}

export async function saveSession(id: string, payload: SavePayload, seconds = 0): Promise<Saved> {
  return (await request(`/live/sessions/${encodeURIComponent(id)}/save`, {
    json: payload,
    timeoutMs: saveTimeoutMs(seconds),
  })) as Saved;
}

async function put(url: string, blob: Blob, type: string) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), UPLOAD_ATTEMPT_TIMEOUT_MS);
  try {
    const response = await fetch(url, {
      method: "PUT",
      body: blob,
      headers: { "Content-Type": type },
      signal: controller.signal,
    }).catch(() => {
      throw new HttpError(0, "");
    });
    if (!response.ok) throw new HttpError(response.status, "");
  } finally {
    clearTimeout(timer);
  }
}

/** The compressed copy as the recording's audio file. Each step with SPEC §7's retries. */
export async function uploadAudioCopy(audioKey: string, blob: Blob, mimeType: string, extension: string) {
  const fileName = `live-${new Date().toISOString().replace(/[:.]/g, "-")}.${extension}`;
  const slot = (await withRetries(() =>
    request("/api/get-upload-url", {
      json: { file_name: fileName, file_type: mimeType, specific_key: audioKey },
      timeoutMs: UPLOAD_ATTEMPT_TIMEOUT_MS,
    }),
  )) as { url?: string; key?: string } | null;
  if (!slot?.url || !slot.key) throw new HttpError(200, "Invalid upload response");
  await withRetries(() => put(slot.url!, blob, mimeType));
  const key = slot.key;
  await withRetries(() => request(CONFIRM_AUDIO_PATH, { json: { key }, timeoutMs: UPLOAD_ATTEMPT_TIMEOUT_MS }));
}
