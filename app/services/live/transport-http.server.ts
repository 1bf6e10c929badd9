import { LIVE_BUFFER_BYTES } from "~/live/protocol";
import { ApiError, apiJson, readJsonBody, requireApiUser } from "../web/api.server";
import { auditLive } from "../audit/events.server";
import { subscribe } from "./bus.server";
import {
  acceptAudio,
  createLiveSession,
  discardLive,
  endLive,
  LiveProtocolError,
  liveSessionView,
  messagesAfter,
  requireLiveSession,
  splitBuffers,
  startLive,
} from "./sessions.server";

// The HTTP door of a live session (ADR 0013), for networks whose proxies block WebSockets: audio goes up in
// POSTs, results come down as server-sent events. Every request authenticates (cookie or bearer), passes the
// cross-site check and finds the session by owner; nothing about the session lives in this process, so
// consecutive requests may reach different app instances.

/** At most this many buffers per POST (8 s of audio): a client that fell behind catches up in a few requests. */
const MAX_BUFFERS_PER_POST = 32;
const SSE_PING_MS = 15_000;

export function liveError(error: unknown) {
  if (error instanceof LiveProtocolError)
    return apiJson({ detail: error.message, type: error.type, ...error.extra }, { status: error.status });
  if (error instanceof ApiError)
    return apiJson({ detail: error.detail }, { status: error.status, headers: error.headers });
  if (error instanceof Response) throw error;
  console.warn("[live] request failed:", error instanceof Error ? error.message : error);
  return apiJson({ detail: "Internal error", type: "unknown_error" }, { status: 500 });
}

/** The body, read only up to `cap` bytes: a chunked request without Content-Length cannot fill memory. */
async function readCapped(request: Request, cap: number) {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.length;
    if (size > cap) {
      await reader.cancel();
      throw new ApiError(413, "Too much audio in one request");
    }
    chunks.push(value);
  }
}

async function guarded(handler: () => Promise<Response>) {
  try {
    return await handler();
  } catch (error) {
    return liveError(error);
  }
}

/**
 * POST /live/sessions { kind, language } → 201 { id, mode: "relay", kind, language, engine, max_delay, partials },
 * or in direct mode 200 { id: null, mode: "direct", …, direct: { url, start } } and no session (ADR 0013).
 */
export function createSessionRoute(request: Request) {
  return guarded(async () => {
    const user = await requireApiUser(request);
    if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
    const body = await readJsonBody(request);
    const created = await createLiveSession({
      userId: user.id,
      kind: body.kind,
      language: body.language,
      consent: body.consent,
    });
    if (created.id === null) return apiJson(created);
    await auditLive(request, user.id, "live.create", created.id);
    return apiJson(created, { status: 201 });
  });
}

function eventStream(request: Request, sessionId: string, after: number) {
  const encoder = new TextEncoder();
  let last = after;
  let stop = () => {};
  return new ReadableStream<Uint8Array>({
    cancel: () => stop(),
    start(controller) {
      let busy = false;
      let again = false;
      let closed = false;
      const write = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      const pump = async () => {
        if (busy) return void (again = true);
        busy = true;
        try {
          do {
            again = false;
            for (const message of await messagesAfter(sessionId, last)) {
              write(`id: ${message.n}\ndata: ${JSON.stringify(message)}\n\n`);
              last = message.n ?? last;
            }
          } while (again && !closed);
        } catch (error) {
          console.warn("[live] event stream:", error instanceof Error ? error.message : error);
        } finally {
          busy = false;
        }
      };
      const subscription = subscribe("messages", sessionId, () => void pump());
      const ping = setInterval(() => write(": ping\n\n"), SSE_PING_MS);
      stop = () => {
        if (closed) return;
        closed = true;
        clearInterval(ping);
        subscription.stop();
      };
      request.signal.addEventListener("abort", () => {
        stop();
        controller.close();
      });
      write("retry: 1000\n\n");
      void subscription.ready.then(pump);
    },
  });
}

/** GET /live/sessions/<id> (the session's view) and GET /live/sessions/<id>/events (server-sent events). */
export function sessionLoader(request: Request, path: string) {
  return guarded(async () => {
    const user = await requireApiUser(request);
    const [id, what, ...rest] = path.split("/");
    if (rest.length > 0 || (what !== undefined && what !== "events")) throw new ApiError(404, "Not found");
    const session = await requireLiveSession(user.id, id);
    if (what === undefined) return apiJson(await liveSessionView(session));
    const url = new URL(request.url);
    const after = Number(
      request.headers.get("Last-Event-ID") ?? url.searchParams.get("after") ?? session.last_message_n,
    );
    return new Response(eventStream(request, session.id, Number.isInteger(after) && after >= 0 ? after : 0), {
      headers: {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-cache, no-transform",
        "X-Accel-Buffering": "no",
      },
    });
  });
}

/** POST /live/sessions/<id>/start|audio|end|discard. Saving has a route of its own. */
export function sessionAction(request: Request, path: string) {
  return guarded(async () => {
    const user = await requireApiUser(request);
    if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
    const [id, what, ...rest] = path.split("/");
    if (rest.length > 0) throw new ApiError(404, "Not found");
    switch (what) {
      case "start":
        return apiJson(
          (await startLive({ userId: user.id, id, start: await readJsonBody(request), transport: "http" })).started,
        );
      case "audio": {
        const session = await requireLiveSession(user.id, id);
        const declared = Number(request.headers.get("Content-Length") ?? 0);
        if (declared > MAX_BUFFERS_PER_POST * LIVE_BUFFER_BYTES)
          throw new ApiError(413, "Too much audio in one request");
        const body = await readCapped(request, MAX_BUFFERS_PER_POST * LIVE_BUFFER_BYTES);
        const firstSeq = Number(new URL(request.url).searchParams.get("seq"));
        return apiJson(await acceptAudio({ session, firstSeq, buffers: splitBuffers(body) }));
      }
      case "end":
        await endLive({ session: await requireLiveSession(user.id, id), end: await readJsonBody(request) });
        return new Response(null, { status: 202 });
      case "discard":
        await discardLive({ userId: user.id, id });
        await auditLive(request, user.id, "live.discard", id);
        return new Response(null, { status: 204 });
      default:
        throw new ApiError(404, "Not found");
    }
  });
}
