import fs from "node:fs";
import net from "node:net";
import { isLoopbackHost } from "../config/transport.server";

// The clamd protocol (ClamAV's scanning daemon, Debian's clamav-daemon; clamd(8), "Commands"), as the upload
// checks use it (ASVS 5.0 5.4.3, ADR 0024). One connection per scan: "zINSTREAM\0", then the bytes in chunks each
// preceded by its length as a 4-byte big-endian number, then a zero length; clamd answers one NUL-terminated line:
// "stream: OK", "stream: <signature> FOUND", or "<reason> ERROR" (for instance "INSTREAM size limit exceeded.
// ERROR", after which it closes the connection while the client may still be writing). "zPING\0" answers "PONG",
// "zVERSION\0" the engine's and the signature database's versions. The daemon's own limits (StreamMaxLength,
// MaxFileSize, MaxScanSize) must admit a 70 MB recording: a refusal is an error, never a clean verdict.

export type ClamdTarget = { host: string; port: number } | { path: string };
export type ClamdVerdict = { infected: false } | { infected: true; signature: string };
export type ClamdFailure = "unreachable" | "timeout" | "error";

export class ClamdError extends Error {
  constructor(
    readonly reason: ClamdFailure,
    message: string,
  ) {
    super(message);
  }
}

/** What a scan reads: a stream, or a few buffers already in memory. */
type Body = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** Largest chunk written with one length prefix (clamd reads chunks of any size up to StreamMaxLength). */
const CHUNK_BYTES = 64 * 1024;

/** `tcp://host:port` (to this machine only: clamd speaks no TLS) or `unix:///path/to/clamd.ctl`; else a reason. */
export function clamdUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be tcp://127.0.0.1:3310, unix:///run/clamav/clamd.ctl or none";
  }
  if (url.protocol === "unix:") return url.pathname.startsWith("/") ? undefined : "needs an absolute socket path";
  if (url.protocol !== "tcp:") return "must start with tcp:// or unix://";
  if (!url.port) return "needs a port (clamd's is usually 3310)";
  // Recordings would cross the network unencrypted: a clamd elsewhere is reached over a Unix socket or a sidecar.
  if (!isLoopbackHost(url.hostname)) return "tcp:// only to localhost (clamd does not encrypt; use a Unix socket)";
  return undefined;
}

export function clamdTarget(value: string): ClamdTarget {
  const url = new URL(value);
  if (url.protocol === "unix:") return { path: decodeURIComponent(url.pathname) };
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) };
}

function lengthPrefix(bytes: number) {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(bytes);
  return prefix;
}

/** Sends `command`, then (for INSTREAM) `body` in chunks; resolves with clamd's one answer line. */
function converse(target: ClamdTarget, command: string, timeoutMs: number, body?: Body): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(target);
    const received: Buffer[] = [];
    let connected = false;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      outcome();
    };
    const answer = () =>
      Buffer.concat(received)
        .toString("utf8")
        .replace(/\0[\s\S]*$/, "")
        .trim();
    const timer = setTimeout(
      () => finish(() => reject(new ClamdError("timeout", `clamd gave no answer within ${timeoutMs} ms`))),
      timeoutMs,
    );
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk);
      if (chunk.includes(0)) finish(() => resolve(answer()));
    });
    // clamd refusing a stream answers and closes at once: what it said counts, not the write that then failed. The
    // close can also reach the writer first (EPIPE, ECONNRESET), and Node then drops the answer unread.
    socket.on("error", (error: NodeJS.ErrnoException) =>
      finish(() => {
        if (answer()) return resolve(answer());
        if (!connected) return reject(new ClamdError("unreachable", `clamd: ${error.message}`));
        const hangUp = error.code === "EPIPE" || error.code === "ECONNRESET";
        const why = hangUp
          ? `${error.code}: clamd hung up while the file was sent (over its StreamMaxLength?)`
          : error.message;
        reject(new ClamdError("error", `clamd: ${why}`));
      }),
    );
    socket.on("close", () =>
      finish(() => (answer() ? resolve(answer()) : reject(new ClamdError("error", "clamd closed without an answer")))),
    );
    socket.once("connect", () => {
      connected = true;
      void send(socket, command, body, () => settled).catch((error: unknown) =>
        finish(() => reject(new ClamdError("error", `reading the upload: ${String(error)}`))),
      );
    });
  });
}

async function send(socket: net.Socket, command: string, body: Body | undefined, done: () => boolean) {
  const write = async (data: Uint8Array) => {
    // Once the conversation has ended (an answer, an error, the time-out) nothing more is written, and nothing waits
    // for a 'close' that has already been emitted.
    if (done() || socket.destroyed) return;
    if (socket.write(data) || socket.destroyed) return;
    // Waits for clamd to read on, or for the connection to end.
    await new Promise<void>((resolve) => {
      const go = () => {
        socket.off("drain", go).off("close", go);
        resolve();
      };
      socket.on("drain", go).on("close", go);
    });
  };
  await write(Buffer.from(`z${command}\0`, "latin1"));
  if (!body) return;
  for await (const piece of body) {
    for (let offset = 0; offset < piece.byteLength; offset += CHUNK_BYTES) {
      if (done()) return;
      const slice = piece.subarray(offset, offset + CHUNK_BYTES);
      await write(lengthPrefix(slice.byteLength));
      await write(slice);
    }
  }
  if (!done()) await write(lengthPrefix(0));
}

/** Scans a byte stream; a refusal of clamd's ("… ERROR") or a broken conversation throws ClamdError. */
export async function scanWithClamd(target: ClamdTarget, body: Body, timeoutMs: number): Promise<ClamdVerdict> {
  const line = await converse(target, "INSTREAM", timeoutMs, body);
  if (line === "stream: OK") return { infected: false };
  const found = /^stream: (.+) FOUND$/.exec(line);
  if (found) return { infected: true, signature: found[1] };
  throw new ClamdError("error", `clamd refused the scan: ${line.slice(0, 200)}`);
}

/** Scans a file on disk, read in chunks (a 70 MB recording is never held in memory). */
export async function scanFileWithClamd(target: ClamdTarget, file: string, timeoutMs: number) {
  const stream = fs.createReadStream(file, { highWaterMark: CHUNK_BYTES });
  try {
    return await scanWithClamd(target, stream, timeoutMs);
  } finally {
    stream.destroy();
  }
}

/** "PONG" and the version line, for the health check. */
export async function clamdVersion(target: ClamdTarget, timeoutMs: number) {
  const pong = await converse(target, "PING", timeoutMs);
  if (pong !== "PONG") throw new ClamdError("error", `clamd answered PING with ${pong.slice(0, 80)}`);
  return converse(target, "VERSION", timeoutMs);
}
