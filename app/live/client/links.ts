import { MODELS_LOADING, type EndOfStream, type NumberedMessage, type StartRecognition } from "../protocol";
import type { LiveFailure } from "./messages";
import { directLink } from "./direct-link";
import { parse, type Link, type LinkFactory, type LinkHandlers } from "./link";

// The two transports of app/live/protocol.ts, same origin with the session cookie, and the direct mode's.

/** Buffers per audio POST: about 2 s of speech, 64 KiB — small enough for a slow uplink to finish. */
const HTTP_BATCH = 8;
/** A POST that takes longer is given up and the link reconnects (the buffers stay with the connection). */
const HTTP_TIMEOUT_MS = 30_000;

export const defaultLinks: LinkFactory = (name, sessionId, handlers, direct) => {
  if (name === "direct" && direct) return directLink(direct, handlers);
  return name === "websocket" ? webSocketLink(sessionId, handlers) : httpLink(sessionId, handlers);
};

function webSocketLink(sessionId: string, handlers: LinkHandlers): Link {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${location.host}/live/ws?session=${encodeURIComponent(sessionId)}`);
  ws.binaryType = "arraybuffer";
  const queue: Array<string | Int16Array> = [];
  const send = (data: string | Int16Array) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(data);
    else if (ws.readyState === WebSocket.CONNECTING) queue.push(data);
  };
  ws.onopen = () => queue.splice(0).forEach((data) => ws.send(data));
  ws.onmessage = (event: MessageEvent) => {
    const message = typeof event.data === "string" ? parse(event.data) : null;
    if (message) handlers.message(message);
  };
  ws.onclose = (event: CloseEvent) =>
    handlers.closed({
      code: event.code,
      reason: event.reason,
      // Speechmatics' code for a refused key; our endpoint uses it for a refused sign-in too.
      failure: event.code === 4001 ? { key: "authFailed" } : undefined,
    });
  return {
    start: (message) => send(JSON.stringify(message)),
    audio: (_seq, pcm) => send(pcm),
    end: (message) => send(JSON.stringify(message)),
    close(code) {
      ws.onmessage = ws.onclose = null;
      // Closing a socket that is still connecting makes Chromium log an error; let it open, then close.
      if (ws.readyState === WebSocket.CONNECTING) ws.onopen = () => ws.close(code);
      else if (ws.readyState === WebSocket.OPEN) ws.close(code);
    },
  };
}

type Answer = { ok: true; body: unknown } | { ok: false; failure?: LiveFailure };

/**
 * An HTTP answer sorted into success, a lasting refusal (`failure`), or a transient problem (neither). A 409 on
 * audio or EndOfStream (out of order, the run paused by the server) is mended by starting again, which tells
 * where the server stands.
 */
async function classify(response: Response, conflictMends: boolean): Promise<Answer> {
  const body = await response.json().catch(() => null);
  if (response.ok) return { ok: true, body };
  if (response.status === 401 || response.status === 403) return { ok: false, failure: { key: "authFailed" } };
  // A dictation while the speech model downloads: retrying now would not help.
  if (body?.type === MODELS_LOADING) return { ok: false, failure: { key: "modelsLoading" } };
  if (response.status >= 500 || response.status === 408 || response.status === 429) return { ok: false };
  if (response.status === 409 && conflictMends) return { ok: false };
  const detail = body && typeof body.detail === "string" ? body.detail : "";
  return {
    ok: false,
    failure: detail ? { key: "transcriptionError", values: { reason: detail } } : { key: "connectionError" },
  };
}

function httpLink(sessionId: string, handlers: LinkHandlers): Link {
  const base = `/live/sessions/${encodeURIComponent(sessionId)}`;
  const controllers = new Set<AbortController>();
  const queue: Array<{ seq: number; pcm: Int16Array }> = [];
  let events: EventSource | null = null;
  let closed = false;
  let busy = false;
  let ending: EndOfStream | null = null;

  const lost = (failure?: LiveFailure) => {
    if (closed) return;
    closed = true;
    events?.close();
    controllers.forEach((controller) => controller.abort());
    handlers.closed({ code: 1006, failure });
  };

  async function post(path: string, body: BodyInit, type: string): Promise<unknown> {
    const controller = new AbortController();
    controllers.add(controller);
    const timer = setTimeout(() => controller.abort(), HTTP_TIMEOUT_MS);
    try {
      const response = await fetch(`${base}/${path}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": type, Accept: "application/json" },
        body,
        signal: controller.signal,
      });
      const answer = await classify(response, path !== "start");
      if (answer.ok) return answer.body;
      throw answer;
    } finally {
      clearTimeout(timer);
      controllers.delete(controller);
    }
  }
  const fail = (error: unknown) => lost((error as { failure?: LiveFailure })?.failure);

  function listen(after: number) {
    events = new EventSource(`${base}/events?after=${after}`);
    events.onmessage = (event) => {
      const message = parse(event.data);
      if (!message) return;
      if (typeof message.n !== "number" && event.lastEventId) message.n = Number(event.lastEventId);
      handlers.message(message);
    };
    // The browser reconnects by itself (with Last-Event-ID); only a stream it gave up on ends the link.
    events.onerror = () => {
      if (events?.readyState === EventSource.CLOSED) lost();
    };
  }

  // One request at a time keeps the server's view in order; the batch grows while a slow POST is out.
  function pump() {
    if (closed || busy) return;
    if (queue.length) {
      const batch = queue.slice(0, HTTP_BATCH);
      const bytes = new Uint8Array(batch.reduce((sum, item) => sum + item.pcm.byteLength, 0));
      let offset = 0;
      for (const { pcm } of batch) {
        bytes.set(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength), offset);
        offset += pcm.byteLength;
      }
      busy = true;
      post(`audio?seq=${batch[0].seq}`, bytes, "application/octet-stream").then((added) => {
        busy = false;
        queue.splice(0, batch.length);
        if (closed) return;
        const message = added as NumberedMessage | null;
        handlers.message(message?.message ? message : { message: "AudioAdded", seq_no: batch[batch.length - 1].seq });
        pump();
      }, fail);
    } else if (ending) {
      const message = ending;
      ending = null;
      busy = true;
      post("end", JSON.stringify(message), "application/json").then(() => {
        busy = false;
      }, fail);
    }
  }

  return {
    start(message: StartRecognition) {
      post("start", JSON.stringify(message), "application/json").then((started) => {
        if (closed) return;
        const answer = started as NumberedMessage | null;
        if (!answer?.message) return lost({ key: "connectionError" });
        handlers.message(answer);
        if (answer.message === "RecognitionStarted") listen(message.last_n ?? 0);
      }, fail);
    },
    audio(seq, pcm) {
      queue.push({ seq, pcm });
      pump();
    },
    end(message) {
      ending = message;
      pump();
    },
    // HTTP has no close code: the server learns of the end from EndOfStream, or from its idle time-out.
    close() {
      if (closed) return;
      closed = true;
      events?.close();
      controllers.forEach((controller) => controller.abort());
    },
  };
}
