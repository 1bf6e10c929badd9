import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { Kysely, Migrator, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { migrations } from "../../migrations/index";
import { pgliteNotices, postgresNotices, type Notices } from "./db-notices.server";
import type { Database } from "~/models/schema";

// One code path for embedded and real PostgreSQL (ADR 0002): the embedded PGlite
// is served over pglite-socket and everything talks `pg` to it. PGlite is a single
// session, so the app's pool holds exactly one connection: a transaction can never
// see another request's statements (STACK-NOTES pitfall 4).

export type DatabaseHandle = {
  kind: "pglite" | "postgres";
  db: Kysely<Database>;
  pool: pg.Pool;
  connectionString: string;
  /** The database's notices of changed sessions, users and clinicians' rows (db-notices.server.ts). */
  notices: Notices;
  /** PGlite only: a gzip tarball of the data directory, to clone a migrated database. */
  dumpDataDir?: () => Promise<Blob>;
  close(): Promise<void>;
};

export type OpenDatabaseOptions =
  | { kind: "postgres"; url: string; poolSize?: number }
  | {
      kind: "pglite";
      dataDir?: string;
      loadDataDir?: Blob | File;
      /**
       * Serve on a Unix socket in a private folder of its own under the temp folder (else a loopback port, for
       * tests), and write that folder's path into this file for the machine's other processes (embeddedSocketDir).
       */
      socketNote?: string;
    };

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.kind === "postgres") {
    const notices = postgresNotices(options.url);
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 10_000,
      onConnect: (client) => notices.watch(client),
    });
    watchConnections(pool);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return {
      kind: "postgres",
      db,
      pool,
      connectionString: options.url,
      notices,
      async close() {
        await notices.close();
        await db.destroy();
      },
    };
  }

  if (options.dataDir) fs.mkdirSync(options.dataDir, { recursive: true });
  const pglite = await PGlite.create({
    dataDir: options.dataDir,
    loadDataDir: options.loadDataDir,
  });
  const notices = pgliteNotices(pglite);
  // The embedded database listens on a Unix socket in a private directory (PGlite
  // has no authentication); tests without a data directory use a loopback port.
  // A second connection is kept free for operators and tests (psql, e2e checks).
  const socket = options.socketNote ? await privateSocket(options.socketNote) : undefined;
  const server = new PGLiteSocketServer({
    db: pglite,
    ...(socket ? { path: socket.path } : { host: "127.0.0.1", port: 0 }),
    maxConnections: 2,
  });
  try {
    await server.start();
  } catch (error) {
    socket?.remove();
    await pglite.close();
    throw error;
  }
  socket?.announce();
  const connection = socket
    ? { host: socket.dir, port: 5432 }
    : { host: "127.0.0.1", port: Number(server.getServerConn().split(":").pop()) };
  const connectionString = `postgres://postgres@${encodeURIComponent(connection.host)}:${connection.port}/postgres`;
  const pool = new pg.Pool({
    ...connection,
    user: "postgres",
    database: "postgres",
    max: 1,
    connectionTimeoutMillis: 30_000,
    onConnect: (client) => notices.watch(client),
  });
  watchConnections(pool);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closed = false;
  return {
    kind: "pglite",
    db,
    pool,
    connectionString,
    notices,
    dumpDataDir: () => pglite.dumpDataDir("gzip"),
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
      await notices.close();
      await server.stop();
      socket?.remove();
      await pglite.close();
    },
  };
}

/**
 * A connection that breaks while it is checked out — between the statements of a transaction — emits "error" on
 * its client, and pg-pool listens there only while the client is idle: unheard, that error would end the process.
 * The statement in flight fails by itself, and the pool drops the broken client when it is handed back.
 */
function watchConnections(pool: pg.Pool) {
  pool.on("error", (error) => console.warn("[db] idle client error:", error.message));
  pool.on("connect", (client) => {
    client.on("error", (error) => console.warn("[db] connection lost:", error.message));
    withoutNulParameters(client);
  });
}

/**
 * PostgreSQL text (and jsonb) cannot hold U+0000, so a NUL typed or pasted into any field (a template name, a chat
 * question, a key in a JSON body) made the statement fail and the request answer 500. No clinical text means
 * anything by a NUL: every statement's parameters lose theirs, raw or JSON-escaped inside a JSON value, so a write
 * stores the rest and a lookup finds nothing (404).
 */
export function stripNul(value: unknown): unknown {
  if (typeof value !== "string") return value;
  let text = value.includes("\0") ? value.replaceAll("\0", "") : value;
  // In JSON text an escape is a backslash with an even number of backslashes before it: `\\u0000` stays.
  if (text.includes("\\u0000") && /^[[{"]/.test(text)) text = text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1");
  return text;
}

function withoutNulParameters(client: pg.PoolClient) {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (config: unknown, values?: unknown, ...rest: unknown[]) =>
    Array.isArray(values) ? query(config, values.map(stripNul), ...rest) : query(config, values, ...rest);
}

const SOCKET_PREFIX = "skribent-db-";

/**
 * The socket's own folder, made by mkdtemp (mode 0700: PGlite has no authentication) under the temp folder rather
 * than DATA_DIR, whose path may be longer than a socket path may be (sun_path: 107 bytes), and removed on shutdown.
 * pg finds a server socket as `<dir>/.s.PGSQL.<port>`. `note` (in DATA_DIR) names the folder for the machine's
 * other processes; folders that processes left behind when they were killed go first.
 */
async function privateSocket(note: string) {
  // A temp folder whose own path is too long for a socket (TMPDIR set deep) gives way to /tmp.
  const fits = Buffer.byteLength(path.join(os.tmpdir(), `${SOCKET_PREFIX}XXXXXX`, ".s.PGSQL.5432")) <= 100;
  const base = fits ? os.tmpdir() : "/tmp";
  await removeDeadSockets(base);
  fs.rmSync(note, { force: true });
  const dir = fs.mkdtempSync(path.join(base, SOCKET_PREFIX));
  fs.chmodSync(dir, 0o700);
  return {
    dir,
    path: path.join(dir, ".s.PGSQL.5432"),
    announce() {
      fs.mkdirSync(path.dirname(note), { recursive: true });
      fs.writeFileSync(note, `${dir}\n`, { mode: 0o600 });
    },
    remove() {
      if (readSocketNote(note) === dir) fs.rmSync(note, { force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Folders of this user's killed processes (SIGKILL skips the shutdown): their socket answers nobody. */
async function removeDeadSockets(base: string) {
  const uid = process.getuid?.();
  for (const name of fs.readdirSync(base).filter((n) => n.startsWith(SOCKET_PREFIX))) {
    const dir = path.join(base, name);
    try {
      if (fs.statSync(dir).uid !== uid) continue;
      const socketPath = path.join(dir, ".s.PGSQL.5432");
      if (fs.existsSync(socketPath) && (await answers(socketPath))) continue;
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another process's folder, or gone meanwhile: left alone.
    }
  }
}

function answers(socketPath: string) {
  return new Promise<boolean>((resolve) => {
    const probe = net.connect(socketPath);
    probe.setTimeout(1_000);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("timeout", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

function readSocketNote(note: string) {
  try {
    return fs.readFileSync(note, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function migrateToLatest(db: Kysely<Database>) {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(
      `Migration ${failed?.migrationName ?? ""} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return results ?? [];
}

/**
 * The embedded PGlite runs no autovacuum (one process, no background workers): left alone it never gathers the
 * planner's statistics — every table looks empty, and a list of 1,000 recordings was joined row by row for 1.7 s
 * where a hash join takes milliseconds — and never reclaims dead rows (sessions touched, jobs leased, the queue's
 * own tables). This does what autovacuum does on PostgreSQL, where it is left to the server. It holds the single
 * connection while it runs (about 0.2 s for 1,000 recordings with their transcripts and letters).
 * Returns how long it took, or null on PostgreSQL.
 */
export async function upkeepEmbeddedDatabase(handle: DatabaseHandle, { vacuum }: { vacuum: boolean }) {
  if (handle.kind !== "pglite") return null;
  const started = performance.now();
  await sql.raw(vacuum ? "vacuum (analyze)" : "analyze").execute(handle.db);
  return Math.round(performance.now() - started);
}

export async function pingDatabase(db: Kysely<Database>, timeoutMs = 2_000) {
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs).unref(),
  );
  await Promise.race([sql`select 1`.execute(db), timeout]);
}

export function pgliteDataDir(dataDir: string) {
  return path.join(dataDir, "pglite");
}

/** The file in DATA_DIR that names the folder of the running embedded database's socket. */
export function pgliteSocketNote(dataDir: string) {
  return path.join(dataDir, "pglite-socket-dir");
}

/**
 * The folder of the socket of the embedded database running on `dataDir`, for another process of the machine
 * (`psql -h <folder> -U postgres`); undefined when none runs.
 */
export function embeddedSocketDir(dataDir: string) {
  const dir = readSocketNote(pgliteSocketNote(dataDir));
  return dir && fs.existsSync(path.join(dir, ".s.PGSQL.5432")) ? dir : undefined;
}

/** What a process of the app opens (boot): PostgreSQL when DATABASE_URL names it, else PGlite under DATA_DIR. */
export function databaseOptions(config: { databaseUrl?: string; dataDir: string }): OpenDatabaseOptions {
  return config.databaseUrl
    ? { kind: "postgres", url: config.databaseUrl }
    : { kind: "pglite", dataDir: pgliteDataDir(config.dataDir), socketNote: pgliteSocketNote(config.dataDir) };
}

let handle: DatabaseHandle | undefined;

export function setDatabase(next: DatabaseHandle | undefined) {
  handle = next;
}

export function getDatabase(): DatabaseHandle {
  if (!handle) throw new Error("Database not initialised: boot() has not run");
  return handle;
}

export function getDb(): Kysely<Database> {
  return getDatabase().db;
}
