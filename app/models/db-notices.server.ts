import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";

// The database's notices to this process (PostgreSQL's LISTEN/NOTIFY) on the one channel the app listens on,
// `skribent_changes` (migration 0025: a session, a user's name or a clinician's rows changed). What hears them depends
// on the database:
// - PostgreSQL: a connection of its own, LISTENing, opened when the first subscriber comes (a worker process has
//   none and opens none), reopened when it breaks. Each connection of the pool LISTENs too, so a statement this
//   process runs has its own notices before its promise settles — a logout is refused by the very next request to
//   this instance, not a round trip of the listener later.
// - PGlite: one backend, embedded here, serves every connection of its socket, the app's and an operator's psql
//   alike, and writes a notice into the answer of whichever statement caused it. So the answers are read on their way
//   out (readNotices) — always heard, whoever wrote.
// `live` is false while a notice may be missed (the listener is reconnecting); every change of it is told as a reset.

export const CHANGE_CHANNEL = "skribent_changes";

export type NoticeListener = {
  /** A payload on the channel. */
  notice(payload: string): void;
  /** Notices may have been missed (live false) or are heard again (live true): whatever was kept from them is stale. */
  reset(live: boolean): void;
};

export type Notices = {
  readonly live: boolean;
  subscribe(listener: NoticeListener): () => void;
  /** Hands a connection's notices on (each connection of the pool LISTENs, see above): the pool's onConnect. */
  watch(client: pg.ClientBase): Promise<void>;
  close(): Promise<void>;
};

function listeners() {
  const all = new Set<NoticeListener>();
  return {
    all,
    notice: (payload: string) => all.forEach((l) => l.notice(payload)),
    reset: (live: boolean) => all.forEach((l) => l.reset(live)),
  };
}

const listenStatement = `LISTEN ${CHANGE_CHANNEL}`;

function onChannel(client: pg.ClientBase, notice: (payload: string) => void) {
  client.on("notification", (message) => {
    if (message.channel === CHANGE_CHANNEL) notice(message.payload ?? "");
  });
}

/** PostgreSQL: the listening connection, (re)opened on demand; `reconnectMs` between attempts after a break. */
export function postgresNotices(url: string, { reconnectMs = 500 } = {}): Notices {
  const heard = listeners();
  let client: pg.Client | undefined;
  let live = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const setLive = (next: boolean) => {
    if (live === next && !next) return;
    live = next;
    heard.reset(next);
  };
  const lost = (broken: pg.Client) => {
    if (client !== broken) return;
    client = undefined;
    setLive(false);
    broken.end().catch(() => undefined);
    if (!closed && heard.all.size > 0) retry ??= setTimeout(open, reconnectMs).unref();
  };
  async function open() {
    retry = undefined;
    if (closed || client) return;
    const next = new pg.Client({ connectionString: url, keepAlive: true, connectionTimeoutMillis: 10_000 });
    client = next;
    next.on("error", () => lost(next));
    next.on("end", () => lost(next));
    onChannel(next, heard.notice);
    try {
      await next.connect();
      await next.query(listenStatement);
      if (client === next) setLive(true);
    } catch (error) {
      console.warn("[db] the change notices' connection failed:", (error as Error).message);
      lost(next);
    }
  }

  return {
    get live() {
      return live;
    },
    subscribe(listener) {
      heard.all.add(listener);
      if (!client && !retry) void open();
      return () => heard.all.delete(listener);
    },
    async watch(pooled) {
      onChannel(pooled, heard.notice);
      await pooled.query(listenStatement);
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const last = client;
      client = undefined;
      live = false;
      await last?.end().catch(() => undefined);
    },
  };
}

/** PGlite: notices read from every answer the embedded backend gives, over the socket or its own API. */
export function pgliteNotices(pglite: PGlite): Notices {
  const heard = listeners();
  const raw = pglite.execProtocolRawStream.bind(pglite);
  pglite.execProtocolRawStream = (message, options) => {
    const read = readNotices(heard.notice);
    const pass = options?.onRawData;
    return raw(message, { ...options, onRawData: (chunk) => (read(chunk), pass?.(chunk)) });
  };
  let unlisten: (() => Promise<void>) | undefined;
  const ready = pglite.listen(CHANGE_CHANNEL, heard.notice).then((stop) => (unlisten = stop));
  return {
    live: true,
    subscribe(listener) {
      heard.all.add(listener);
      return () => heard.all.delete(listener);
    },
    async watch(pooled) {
      // The backend is one, and LISTEN is its state: said again by each new connection, in case one said UNLISTEN.
      await pooled.query(listenStatement);
    },
    async close() {
      await ready.catch(() => undefined);
      await unlisten?.().catch(() => undefined);
    },
  };
}

const NOTIFICATION_RESPONSE = 0x41; // 'A': Int32 length, Int32 process id, channel\0, payload\0

/**
 * A reader of one answer of the backend (its messages may be cut anywhere between chunks): hands on the payload of
 * every NotificationResponse on the channel and skips everything else by its length, without looking into it.
 */
export function readNotices(notice: (payload: string) => void) {
  const header = new Uint8Array(5);
  let headerFilled = 0;
  let remaining = 0;
  let body: Uint8Array[] | null = null;
  const finish = () => {
    const message = Buffer.concat(body ?? []);
    body = null;
    const channelEnd = message.indexOf(0, 4);
    const payloadEnd = message.indexOf(0, channelEnd + 1);
    if (channelEnd < 0 || payloadEnd < 0) return;
    if (message.toString("utf8", 4, channelEnd) !== CHANGE_CHANNEL) return;
    notice(message.toString("utf8", channelEnd + 1, payloadEnd));
  };
  return (chunk: Uint8Array) => {
    let at = 0;
    while (at < chunk.length) {
      if (remaining === 0) {
        const take = Math.min(5 - headerFilled, chunk.length - at);
        header.set(chunk.subarray(at, at + take), headerFilled);
        headerFilled += take;
        at += take;
        if (headerFilled < 5) return;
        headerFilled = 0;
        remaining = ((header[1] << 24) | (header[2] << 16) | (header[3] << 8) | header[4]) - 4;
        body = header[0] === NOTIFICATION_RESPONSE ? [] : null;
        if (remaining <= 0) {
          remaining = 0;
          if (body) finish();
        }
        continue;
      }
      const take = Math.min(remaining, chunk.length - at);
      // Copied: the chunk's memory may be reused once this returns.
      if (body) body.push(Uint8Array.prototype.slice.call(chunk, at, at + take));
      remaining -= take;
      at += take;
      if (remaining === 0 && body) finish();
    }
  };
}
