import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { LIVE_BUFFER_BYTES, SIGNED_OUT_REASON, type NumberedMessage } from "~/live/protocol";
import { findLiveSession, type LiveSessionRow } from "~/models/live-session.server";
import { auditLive } from "../audit/events.server";
import { auditNotFound } from "../audit/not-found-audit.server";
import { getConfig } from "../config/config.server";
import { readSession } from "../web/session.server";
import { subscribe } from "./bus.server";
import {
  acceptAudio,
  endLive,
  LiveProtocolError,
  messagesAfter,
  requireLiveSession,
  startLive,
} from "./sessions.server";

// The WebSocket door of a live session (ADR 0013): GET /live/ws?session=<id>, upgraded by the custom server
// (server/index.mjs). Authenticated by the sign-in cookie, refused from another Origin, owner-scoped. It speaks the
// Speechmatics realtime vocabulary (app/live/protocol.ts) and uses the same use cases as the HTTP door, so a
// client can switch doors mid-session without losing a buffer or seeing a message twice.

const PING_MS = 20_000;
/** An active stream keeps the sign-in session alive: it is touched at most this often. */
const TOUCH_MS = 60_000;
const CLOSE_CODES: Record<string, number> = {
  protocol_error: 1003,
  invalid_audio_type: 1003,
  invalid_language: 1003,
  invalid_config: 1003,
  not_authorised: 4001,
  not_found: 4004,
  quota_exceeded: 4005,
};

const server = new WebSocketServer({ noServer: true, maxPayload: 4 * LIVE_BUFFER_BYTES });

function refuse(socket: Duplex, status: number, text: string) {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

function requestOf(req: IncomingMessage, url: URL) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(", "));
  }
  return new Request(url, { headers });
}

/** The `upgrade` handler server/index.mjs installs. Never throws: a refusal is a plain HTTP answer. */
export async function handleLiveUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
  try {
    const appUrl = new URL(getConfig().appUrl);
    const url = new URL(req.url ?? "/", appUrl);
    if (url.pathname !== "/live/ws") return refuse(socket, 404, "Not Found");
    if (req.headers.origin !== appUrl.origin) return refuse(socket, 403, "Forbidden");
    const request = requestOf(req, url);
    const state = await readSession(request);
    if (state.kind !== "active") return refuse(socket, 401, "Unauthorized");
    const id = url.searchParams.get("session") ?? "";
    const session = await findLiveSession({ ownerId: state.user.id, id });
    if (!session || session.status === "discarded") {
      // Another user's session, or none: audited as a denied attempt (ASVS 16.3.2), as the HTTP door does.
      const known = { userId: state.user.id, entityType: "live_session", entityId: id };
      await auditNotFound(request, known).catch(() => undefined);
      return refuse(socket, 404, "Not Found");
    }
    await auditLive(request, state.user.id, "live.connect", session.id);
    server.handleUpgrade(req, socket, head, (ws) => serve(ws, { userId: state.user.id, session, request }));
  } catch (error) {
    console.warn("[live] upgrade failed:", error instanceof Error ? error.message : error);
    refuse(socket, 500, "Internal Server Error");
  }
}

function serve(ws: WebSocket, context: { userId: string; session: LiveSessionRow; request: Request }) {
  let session = context.session;
  let started = false;
  let nextSeq = 0;
  let lastSent = 0;
  let touchedAt = Date.now();
  let stopMessages: (() => void) | undefined;
  // Frames are handled one after the other, in the order they came — and none after the one that ended the
  // socket (frames already queued behind a refused one would otherwise still be stored).
  let lane: Promise<unknown> = Promise.resolve();
  let refused = false;
  let delivering = false;
  let deliverAgain = false;

  const send = (message: NumberedMessage) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };

  async function deliver() {
    if (delivering) return void (deliverAgain = true);
    delivering = true;
    try {
      do {
        deliverAgain = false;
        for (const message of await messagesAfter(session.id, lastSent)) {
          send(message);
          lastSent = message.n ?? lastSent;
          if (message.message === "Error") ws.close(CLOSE_CODES[message.type] ?? 1011, message.type.slice(0, 60));
        }
      } while (deliverAgain);
    } finally {
      delivering = false;
    }
  }

  async function onText(text: string) {
    const message = JSON.parse(text) as { message?: string; last_n?: number };
    if (message.message === "StartRecognition") {
      const { started: answer, session: current } = await startLive({
        userId: context.userId,
        id: session.id,
        start: message,
        transport: "websocket",
      });
      session = current;
      started = true;
      nextSeq = answer.last_seq_no + 1;
      lastSent = Math.max(lastSent, Number.isInteger(message.last_n) ? message.last_n! : session.last_message_n);
      send(answer);
      if (!stopMessages) {
        const subscription = subscribe("messages", session.id, () => void deliver());
        stopMessages = subscription.stop;
        await subscription.ready;
      }
      return deliver();
    }
    if (message.message === "EndOfStream") {
      if (!started) throw new LiveProtocolError("protocol_error", "EndOfStream before StartRecognition");
      return endLive({ session: await requireLiveSession(context.userId, session.id), end: message });
    }
    throw new LiveProtocolError("protocol_error", "Unknown message");
  }

  async function onAudio(pcm: Buffer) {
    if (!started) throw new LiveProtocolError("protocol_error", "Audio before StartRecognition");
    if (Date.now() - touchedAt > TOUCH_MS) {
      touchedAt = Date.now();
      // The sign-in must still hold: a logout, a session ended from Settings or one past its absolute limit stops
      // the stream within a minute. What was sent stays with the live session, to continue or save after signing
      // in again (the HTTP door checks every request by itself).
      const state = await readSession(context.request, new Date());
      if (state.kind !== "active") throw new LiveProtocolError("not_authorised", SIGNED_OUT_REASON);
    }
    const answer = await acceptAudio({ session, firstSeq: nextSeq, buffers: [pcm] });
    nextSeq = answer.seq_no + 1;
    send(answer);
  }

  ws.on("message", (data: RawData, binary: boolean) => {
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    lane = lane
      .then(() => {
        if (refused) return;
        return binary ? onAudio(buffer) : onText(buffer.toString("utf8"));
      })
      .catch((error: unknown) => {
        refused = true;
        const failure =
          error instanceof LiveProtocolError
            ? error
            : new LiveProtocolError("unknown_error", error instanceof SyntaxError ? "Invalid JSON" : "Internal error");
        if (!(error instanceof LiveProtocolError)) console.warn("[live] websocket:", (error as Error).message);
        send({ message: "Error", type: failure.type, reason: failure.message });
        ws.close(CLOSE_CODES[failure.type] ?? 1011, failure.type.slice(0, 60));
      });
  });

  const ping = setInterval(() => ws.ping(), PING_MS);
  ping.unref();
  ws.on("close", () => {
    clearInterval(ping);
    stopMessages?.();
  });
  ws.on("error", () => ws.terminate());
}
