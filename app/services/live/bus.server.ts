import { EventEmitter } from "node:events";
import pg from "pg";
import { getDatabase } from "../../models/db.server";

// Wake-ups for live sessions (ADR 0013). The rows in live_audio and live_messages are the truth; the bus only
// says "look again". Inside one process an EventEmitter carries the wake-up (and, for audio, the buffer
// itself, so the runner need not read back what it was just handed). Across app instances on PostgreSQL, a
// NOTIFY on one channel carries "<topic>:<session id>"; every instance LISTENs on a connection of its own and
// re-emits locally. PGlite is one session and one process: there the local emitter is all there is.

export type LiveTopic = "audio" | "messages" | "control";
export type AudioWake = { seq: number; pcm: Buffer };

const CHANNEL = "skribent_live";
const local = new EventEmitter();
local.setMaxListeners(0);

let listener: Promise<pg.Client | undefined> | undefined;

function startListener() {
  listener ??= (async () => {
    const database = getDatabase();
    if (database.kind !== "postgres") return undefined;
    const client = new pg.Client({ connectionString: database.connectionString });
    client.on("notification", (note) => {
      const [topic, id] = (note.payload ?? "").split(":");
      if (topic && id) local.emit(`${topic}:${id}`);
    });
    client.on("error", (error) => {
      console.warn("[live] notification connection lost:", error.message);
      listener = undefined;
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    return client;
  })().catch((error: unknown) => {
    console.warn("[live] cannot listen for notifications:", error instanceof Error ? error.message : error);
    listener = undefined;
    return undefined;
  });
  return listener;
}

/** Wakes every subscriber of a session's topic here, and on PostgreSQL on every other instance. */
export async function wake(topic: LiveTopic, sessionId: string, audio?: AudioWake) {
  local.emit(`${topic}:${sessionId}`, audio);
  const database = getDatabase();
  if (database.kind === "postgres") {
    await database.pool.query("select pg_notify($1, $2)", [CHANNEL, `${topic}:${sessionId}`]);
  }
}

/**
 * Calls `handler` on every wake-up of a session's topic until the returned function is called. `ready`
 * resolves once notifications from other instances are being received too.
 */
export function subscribe(topic: LiveTopic, sessionId: string, handler: (audio?: AudioWake) => void) {
  const name = `${topic}:${sessionId}`;
  local.on(name, handler);
  const ready = startListener().then(() => undefined);
  return { ready, stop: () => void local.off(name, handler) };
}

/** Closes the LISTEN connection (shutdown, tests). */
export async function stopBus() {
  const client = await listener;
  listener = undefined;
  await client?.end().catch(() => undefined);
}
