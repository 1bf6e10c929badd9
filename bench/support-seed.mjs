// Seeding for the page benches: one real recording → transcript → letter made through the JSON API against
// the tests' protocol-faithful engines, then copied in the database so a user has hundreds of them. The copies
// are rows only (every storage key renamed, no object copied): the list routes read the database, never an
// object, so what they serve is the same as for real recordings.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { writeSilentWav } from "./support.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** JSON calls as the page's scripts make them (same-origin headers, the session cookie). */
export function apiClient(app, cookie) {
  const call = async (method, p, body) => {
    const response = await fetch(`${app}${p}`, {
      method,
      headers: {
        cookie,
        origin: app,
        "sec-fetch-site": "same-origin",
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${p} → ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  return { get: (p) => call("GET", p), post: (p, body) => call("POST", p, body) };
}

/** Polls `check` until it gives something, or fails after `timeoutMs`. */
export async function until(what, check, timeoutMs = 60_000) {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

/** Upload → transcript → letter through the API; returns the recording's and the letter's keys. */
export async function recordingWithLetter(client, work, index) {
  const wav = path.join(work, `seed-${index}.wav`);
  writeSilentWav(wav, 16_000 * 2 * 20 + 44); // 20 s
  const slot = await client.post("/api/get-upload-url", {
    file_name: `Sprechstunde-${index}.wav`,
    file_type: "audio/wav",
    language_code: "de",
  });
  const put = await fetch(slot.url, {
    method: "PUT",
    headers: { "content-type": "audio/wav" },
    body: fs.readFileSync(wav),
  });
  if (!put.ok) throw new Error(`PUT → ${put.status}`);
  fs.rmSync(wav);
  await client.post("/api/update-file-metadata", { s3_key: slot.key, metadata: {} });
  const { job_name: job } = await client.post("/api/transcribe_v2", { s3_key: slot.key });
  await until("transcript", async () => {
    const status = await client.get(`/api/transcribe_v2/${encodeURIComponent(job)}/status`);
    if (status.status === "failed") throw new Error(`transcription failed: ${status.error}`);
    return status.status === "completed";
  });
  await client.post("/api/medical-letter-v2", { source_key: slot.key, original_filename: `Sprechstunde-${index}.wav` });
  const letter = await until("letter", async () => {
    const letters = await client.get("/api/arztbriefe");
    const found = letters.arztbriefe.find((l) => l.metadata?.source_key === slot.key);
    if (found?.status === "failed") throw new Error("the letter failed");
    return found?.status === "completed" ? found : null;
  });
  return { recordingKey: slot.key, letterKey: letter.key };
}

// The tables that hang off a recording (and its letter), in insert order, with the columns that point at a
// parent row. Every other uuid column is a fresh id; every string that contains a storage key's
// "<stamp>-<uuid>" part gets the copy's own.
const CHILDREN = [
  { table: "recordings", parents: {} },
  { table: "recording_context", parents: { recording_id: "recordings" } },
  { table: "transcription_jobs", parents: { recording_id: "recordings" } },
  { table: "transcripts", parents: { recording_id: "recordings" } },
  { table: "letters", parents: { recording_id: "recordings" } },
  { table: "letter_versions", parents: { letter_id: "letters" } },
  { table: "letter_jobs", parents: { recording_id: "recordings" } },
];
// A uuid, with the "<yyyymmdd>-<hhmmss>-" of a storage key in front of it if there is one.
const UUID = /(\d{8}-\d{6}-)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g;

function stampOf(date) {
  const p = (n) => String(n).padStart(2, "0");
  return `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}-${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}`;
}

/** A query function on the app's database, closed after use: PGlite's data directory or a PostgreSQL URL. */
export async function openDatabase({ dataDir, databaseUrl }) {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return { query: (sql, params) => client.query(sql, params), close: () => client.end() };
  }
  const db = await PGlite.create({ dataDir: path.join(dataDir, "pglite") });
  return { query: (sql, params) => db.query(sql, params), close: () => db.close() };
}

/** Copies the recording (and everything hanging off it) `copies` times, each a minute older than the last. */
export async function copyRecording(db, recordingKey, copies) {
  const [source] = (await db.query("select id, created_at from recordings where storage_key = $1", [recordingKey]))
    .rows;
  if (!source) throw new Error(`no recording ${recordingKey}`);
  const rowsOf = {};
  for (const { table, parents } of CHILDREN) {
    const [[column]] = Object.entries(parents).length ? [Object.entries(parents)[0]] : [["id"]];
    const ids = table === "recordings" ? [source.id] : (rowsOf[parents[column]] ?? []).map((r) => r.id);
    rowsOf[table] = ids.length
      ? (await db.query(`select * from ${table} where ${column} = any($1::uuid[])`, [ids])).rows
      : [];
  }
  const users = new Set((await db.query("select id from users")).rows.map((r) => r.id));
  // Generated columns (recordings.key_stamp) are made by the database from the copied values.
  const generated = new Set(
    (
      await db.query(
        "select table_name || '.' || column_name as name from information_schema.columns where is_generated = 'ALWAYS'",
      )
    ).rows.map((r) => r.name),
  );
  await db.query("begin");
  for (let copy = 1; copy <= copies; copy++) {
    const at = new Date(new Date(source.created_at).getTime() - copy * 60_000);
    // Every uuid but a user's gets a new one, the same wherever it appears in this copy; key stamps move to `at`.
    const ids = new Map();
    const idFor = (old) => {
      if (users.has(old)) return old;
      if (!ids.has(old)) ids.set(old, randomUUID());
      return ids.get(old);
    };
    const renamed = (value) =>
      value.replace(
        UUID,
        (_, stamp, uuid) => (stamp && !users.has(uuid) ? `${stampOf(at)}-` : (stamp ?? "")) + idFor(uuid),
      );
    for (const { table } of CHILDREN) {
      for (const row of rowsOf[table]) {
        const copied = Object.entries(row).filter(([name]) => !generated.has(`${table}.${name}`));
        const values = copied.map(([name, value]) => {
          if (name === "created_at" || name === "updated_at") return at;
          if (typeof value === "string") return renamed(value);
          if (value !== null && typeof value === "object" && !(value instanceof Date) && !ArrayBuffer.isView(value)) {
            return renamed(JSON.stringify(value));
          }
          return value;
        });
        const names = copied.map(([name]) => name);
        await db.query(
          `insert into ${table} (${names.join(", ")}) values (${names.map((_, i) => `$${i + 1}`).join(", ")})`,
          values,
        );
      }
    }
  }
  await db.query("commit");
}
