import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A protocol-faithful model mirror for the tests (issue 21). It serves files the way the two kinds of source do:
// - a clinic's mirror (MODELS_URL): GET /<name>, with HTTP Range (206 + Content-Range, 416 past the end) and HEAD;
// - the Hugging Face hub: /<owner>/<repo>/resolve/<revision>/<path> answers HEAD and GET with a 302 to its storage,
//   carrying the Git LFS object's SHA-256 and size in X-Linked-Etag / X-Linked-Size (as huggingface_hub reads them);
//   the storage address then serves the bytes with Range.
// Faults a test can arm: drop the connection after N bytes of a file, serve corrupted bytes, answer 404/500, go slow.

type Fault =
  | { kind: "drop"; afterBytes: number; times: number }
  | { kind: "corrupt"; times: number }
  | { kind: "status"; status: number; times: number };

export type MirrorRequest = { method: string; path: string; range?: string };

export type ModelMirror = {
  url: string;
  /** Adds or replaces a served file (bytes, or a path to read them from). */
  serve(name: string, source: Buffer | string): void;
  /** A hub file: /<repo>/resolve/<revision>/<file> → 302 with its LFS hash, then the bytes. */
  serveHub(args: { repo: string; revision?: string; file: string; bytes: Buffer; lfs?: boolean }): void;
  fault(name: string, fault: Fault): void;
  /** Takes back the armed faults (and a hold): from now on every file is served as it is. */
  heal(): void;
  /** Answers every file request with 503 until heal(), as a mirror that is down. */
  hold(): void;
  /** Bytes per second per response (0: as fast as possible). */
  throttle(bytesPerSecond: number): void;
  requests: MirrorRequest[];
  close(): Promise<void>;
};

function sha256(bytes: Buffer) {
  return createHash("sha256").update(bytes).digest("hex");
}

export async function startModelMirror(options: { port?: number; control?: boolean } = {}): Promise<ModelMirror> {
  const files = new Map<string, Buffer>();
  const hub = new Map<string, { storage: string; bytes: Buffer; lfs: boolean }>();
  const faults = new Map<string, Fault>();
  const requests: MirrorRequest[] = [];
  let rate = 0;
  let held = false;

  function takeFault(name: string) {
    const fault = faults.get(name);
    if (!fault) return undefined;
    fault.times -= 1;
    if (fault.times <= 0) faults.delete(name);
    return fault;
  }

  async function send(res: http.ServerResponse, body: Buffer, drop?: number) {
    const chunk = 64 * 1024;
    for (let at = 0; at < body.length; at += chunk) {
      const piece = body.subarray(at, Math.min(at + chunk, body.length));
      if (drop !== undefined && at + piece.length > drop) {
        res.write(piece.subarray(0, Math.max(0, drop - at)));
        // The connection goes away mid-file, as on a flaky rural link.
        res.socket?.destroy();
        return;
      }
      if (!res.write(piece)) await new Promise((resolve) => res.once("drain", resolve));
      if (rate > 0) await new Promise((resolve) => setTimeout(resolve, (piece.length / rate) * 1000));
    }
    res.end();
  }

  function serveBytes(req: http.IncomingMessage, res: http.ServerResponse, name: string, original: Buffer) {
    const fault = takeFault(name);
    if (fault?.kind === "status") {
      res.writeHead(fault.status, { "Content-Type": "text/plain" }).end(`error ${fault.status}`);
      return;
    }
    let bytes = original;
    if (fault?.kind === "corrupt") {
      bytes = Buffer.from(original);
      bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    if (range) {
      const start = Number(range[1]);
      if (start >= bytes.length) {
        res.writeHead(416, { "Content-Range": `bytes */${bytes.length}` }).end();
        return;
      }
      const body = bytes.subarray(start);
      res.writeHead(206, {
        "Content-Type": "application/octet-stream",
        "Content-Length": body.length,
        "Content-Range": `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
        "Accept-Ranges": "bytes",
      });
      if (req.method === "HEAD") return res.end();
      void send(res, body, fault?.kind === "drop" ? fault.afterBytes - start : undefined);
      return;
    }
    res.writeHead(200, {
      "Content-Type": "application/octet-stream",
      "Content-Length": bytes.length,
      "Accept-Ranges": "bytes",
    });
    if (req.method === "HEAD") return res.end();
    void send(res, bytes, fault?.kind === "drop" ? fault.afterBytes : undefined);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://mirror");
    const path = decodeURIComponent(url.pathname);
    requests.push({ method: req.method ?? "GET", path, range: req.headers.range });
    // For a mirror in another process (scripts/fake-model-mirror.mjs): the end-to-end tests hold and release it.
    if (options.control && req.method === "POST" && path.startsWith("/_control/")) {
      if (path === "/_control/hold") held = true;
      else if (path === "/_control/release") {
        held = false;
        faults.clear();
      } else return void res.writeHead(404).end();
      return void res.writeHead(204).end();
    }
    if (held) {
      res.writeHead(503, { "Content-Type": "text/plain", "Retry-After": "1" }).end("mirror on hold");
      return;
    }
    const hubFile = hub.get(path);
    if (hubFile && !hubFile.lfs) {
      // A file kept in Git itself, not LFS: served directly, with the Git object's id as ETag and no X-Linked-*.
      res.writeHead(200, { "Content-Length": hubFile.bytes.length, ETag: `"${"0".repeat(40)}"` });
      res.end(req.method === "HEAD" ? undefined : hubFile.bytes);
      return;
    }
    if (hubFile) {
      res
        .writeHead(302, {
          Location: hubFile.storage,
          "X-Linked-Etag": `"${sha256(hubFile.bytes)}"`,
          "X-Linked-Size": String(hubFile.bytes.length),
          ETag: `"${sha256(hubFile.bytes)}"`,
        })
        .end();
      return;
    }
    const name = path.replace(/^\/+/, "");
    const stored = files.get(name);
    if (!stored) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Entry not found");
      return;
    }
    serveBytes(req, res, name, stored);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    serve(name, source) {
      files.set(name, typeof source === "string" ? readFileSync(source) : source);
    },
    serveHub({ repo, revision = "main", file, bytes, lfs = true }) {
      const storage = `lfs-storage/${sha256(bytes)}`;
      files.set(storage, bytes);
      hub.set(`/${repo}/resolve/${revision}/${file}`, { storage: `${url}/${storage}`, bytes, lfs });
    },
    fault(name, fault) {
      faults.set(name, { ...fault });
    },
    heal() {
      faults.clear();
      held = false;
    },
    hold() {
      held = true;
    },
    throttle(bytesPerSecond) {
      rate = bytesPerSecond;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
