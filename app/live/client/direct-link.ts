import type { NumberedMessage } from "../protocol";
import { HttpError, request } from "./api";
import { parse, type DirectTarget, type Link, type LinkClosed, type LinkHandlers } from "./link";
import type { LiveFailure } from "./messages";

// Direct mode (SPEC §7 "Notes on calls", ADR 0013): the browser talks to Speechmatics itself. A temporary key
// from POST /api/speechmatics-jwt (≤ 60 s, never stored or logged here) goes into the socket's URL; the
// StartRecognition is the server's, so settings and vocabulary are the relay's. Audio leaves as 16-bit PCM.
// The provider's session cannot be resumed: a drop ends the run (transport.ts reports it), and what arrived
// stays with the page.

/** The token call's name (SPEC §7 POST /api/{speech_provider}-jwt). */
export const TOKEN_PATH = "/api/speechmatics-jwt";

function tokenFailure(error: unknown): LiveFailure {
  if (!(error instanceof HttpError)) return { key: "connectionError" };
  // 401/403: our sign-in lapsed; 502: the provider refused our key — both are a failed authentication.
  if (error.status === 401 || error.status === 403 || error.status === 502) return { key: "authFailed" };
  if (error.status === 0 || error.status >= 500 || error.status === 429) return { key: "connectionError" };
  return error.detail ? { key: "transcriptionError", values: { reason: error.detail } } : { key: "connectionError" };
}

/** One provider session. `WebSocketImpl` is for tests that run the client outside a browser. */
export function directLink(
  target: DirectTarget,
  handlers: LinkHandlers,
  WebSocketImpl: typeof WebSocket = WebSocket,
): Link {
  let ws: WebSocket | null = null;
  let done = false;
  /** What the connection sent before the socket opened (it waits for RecognitionStarted, so little). */
  const queue: Array<string | Int16Array> = [];
  const send = (data: string | Int16Array) => {
    if (ws?.readyState === WebSocketImpl.OPEN) ws.send(data);
    else if (!done) queue.push(data);
  };
  const closed = (info: LinkClosed) => {
    if (done) return;
    done = true;
    handlers.closed(info);
  };

  function open(jwt: string) {
    const url = new URL(target.url);
    url.searchParams.set("jwt", jwt);
    const socket = new WebSocketImpl(url.toString());
    ws = socket;
    socket.binaryType = "arraybuffer";
    socket.onopen = () => {
      socket.send(JSON.stringify(target.start));
      queue.splice(0).forEach((data) => socket.send(data));
    };
    socket.onmessage = (event: MessageEvent) => {
      const message = typeof event.data === "string" ? parse(event.data) : null;
      if (!message || done) return;
      // A provider session starts empty: nothing of this run is held anywhere yet.
      if (message.message === "RecognitionStarted") message.last_seq_no = 0;
      handlers.message(message as NumberedMessage);
    };
    socket.onclose = (event: CloseEvent) =>
      closed({
        code: event.code,
        reason: event.reason,
        failure: event.code === 4001 ? { key: "authFailed" } : undefined,
      });
  }

  return {
    start() {
      request(TOKEN_PATH, { method: "POST", timeoutMs: 10_000 }).then(
        (body) => {
          const jwt = (body as { jwt?: unknown } | null)?.jwt;
          if (done) return;
          if (typeof jwt !== "string" || !jwt) return closed({ code: 1006, failure: { key: "authFailed" } });
          open(jwt);
        },
        (error: unknown) => closed({ code: 1006, failure: tokenFailure(error) }),
      );
    },
    audio: (_seq, pcm) => send(pcm),
    end: (message) => send(JSON.stringify(message)),
    close(code) {
      done = true;
      queue.length = 0;
      const socket = ws;
      if (!socket) return;
      socket.onmessage = socket.onclose = null;
      if (socket.readyState === WebSocketImpl.CONNECTING) socket.onopen = () => socket.close(code);
      else if (socket.readyState === WebSocketImpl.OPEN) socket.close(code);
    },
  };
}
