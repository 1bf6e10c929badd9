import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createRequire } from "node:module";
import { pipeline } from "node:stream";

// A local S3-compatible server for tests (s3rver checks expiry and keys, not
// SigV4 signatures — STACK-NOTES pitfall 6).
//
// s3rver 3.7 implements CreateMultipartUpload, UploadPart and
// CompleteMultipartUpload but answers ListParts (GET …?uploadId=) and
// AbortMultipartUpload (DELETE …?uploadId=) with 405 MethodNotAllowed. So the
// endpoint handed to tests is a small front server that answers those two
// itself, straight from s3rver's filesystem store, and streams everything else
// through to s3rver unchanged.
type S3rverInstance = { run(): Promise<AddressInfo>; close(): Promise<void> };
const S3rver = createRequire(import.meta.url)("s3rver") as new (options: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

const S3_XMLNS = "http://s3.amazonaws.com/doc/2006-03-01/";
const NO_SUCH_UPLOAD =
  "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.";
// Headers that describe one connection, not the message; node sets its own on each hop.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  // The front server has already answered "100 Continue" itself.
  "expect",
]);

/**
 * s3rver's FilesystemStore keeps open multipart uploads in
 * `getResourcePath(bucket, undefined, "uploads")`, i.e. with S3RVER_SUFFIX
 * "%s._S3rver_%s" and an empty key: `<dir>/<bucket>/._S3rver_uploads/<uploadId>/`
 * holding `key`, `metadata`, and per part `<n>` and `<n>.md5`.
 */
function uploadsDir(directory: string, bucket: string): string {
  return path.join(directory, bucket, "._S3rver_uploads");
}

function escapeXml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function sendXml(res: http.ServerResponse, status: number, body: string) {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
  res.writeHead(status, {
    "Content-Type": "application/xml",
    "Content-Length": Buffer.byteLength(xml),
  });
  res.end(xml);
}

function sendError(res: http.ServerResponse, status: number, code: string, message: string, extra = "") {
  sendXml(res, status, `<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message>${extra}</Error>`);
}

function sendNoSuchUpload(res: http.ServerResponse, uploadId: string) {
  sendError(res, 404, "NoSuchUpload", NO_SUCH_UPLOAD, `<UploadId>${escapeXml(uploadId)}</UploadId>`);
}

/** The upload's folder when `uploadId` names an open upload of `key`, else null. */
async function findUpload(directory: string, bucket: string, key: string, uploadId: string): Promise<string | null> {
  // s3rver's upload ids are 32 hex digits; anything else must not become a path.
  if (!/^[A-Za-z0-9_-]+$/.test(uploadId) || !/^[A-Za-z0-9._-]+$/.test(bucket) || bucket.startsWith(".")) return null;
  const dir = path.join(uploadsDir(directory, bucket), uploadId);
  try {
    // s3rver's UploadPart does not check the upload exists and creates the folder
    // anyway, so a folder alone does not make an upload: the `key` file does.
    const storedKey = await fs.promises.readFile(path.join(dir, "key"), "utf8");
    return storedKey === key ? dir : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

type Part = { number: number; size: number; lastModified: Date; md5: string };

async function readParts(dir: string): Promise<Part[]> {
  const names = await fs.promises.readdir(dir);
  const numbers = names
    .filter((name) => /^[0-9]+$/.test(name))
    .map(Number)
    .filter((n) => n >= 1 && n <= 10_000);
  const parts: Part[] = [];
  for (const number of numbers) {
    // s3rver writes `<n>.md5` once the part's body has been read; a part without
    // it is still being uploaded and, as on S3, not listed yet.
    if (!names.includes(`${number}.md5`)) continue;
    try {
      const [stat, md5] = await Promise.all([
        fs.promises.stat(path.join(dir, String(number))),
        fs.promises.readFile(path.join(dir, `${number}.md5`), "utf8"),
      ]);
      parts.push({ number, size: stat.size, lastModified: stat.mtime, md5: md5.trim() });
    } catch (error) {
      // Completed or aborted meanwhile.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return parts.sort((a, b) => a.number - b.number);
}

function nonNegativeInteger(value: string | null, fallback: number): number | null {
  if (value === null || value === "") return fallback;
  return /^[0-9]+$/.test(value) ? Number(value) : null;
}

/** ListParts, https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListParts.html */
async function listParts(
  res: http.ServerResponse,
  directory: string,
  target: { bucket: string; key: string; uploadId: string; query: URLSearchParams },
) {
  const { bucket, key, uploadId, query } = target;
  const maxPartsAsked = nonNegativeInteger(query.get("max-parts"), 1000);
  const marker = nonNegativeInteger(query.get("part-number-marker"), 0);
  if (maxPartsAsked === null || marker === null) {
    const name = maxPartsAsked === null ? "max-parts" : "part-number-marker";
    return sendError(
      res,
      400,
      "InvalidArgument",
      `Provided ${name} not an integer or within integer range`,
      `<ArgumentName>${name}</ArgumentName><ArgumentValue>${escapeXml(query.get(name) ?? "")}</ArgumentValue>`,
    );
  }
  // S3 never returns more than 1000 parts per page.
  const maxParts = Math.min(maxPartsAsked, 1000);
  const dir = await findUpload(directory, bucket, key, uploadId);
  if (!dir) return sendNoSuchUpload(res, uploadId);

  const after = (await readParts(dir)).filter((part) => part.number > marker);
  const page = after.slice(0, maxParts);
  const isTruncated = after.length > page.length;
  const nextMarker = page.length > 0 ? page[page.length - 1].number : marker;
  const partsXml = page
    .map(
      (part) =>
        `<Part><PartNumber>${part.number}</PartNumber>` +
        `<LastModified>${part.lastModified.toISOString()}</LastModified>` +
        `<ETag>"${escapeXml(part.md5)}"</ETag><Size>${part.size}</Size></Part>`,
    )
    .join("");
  sendXml(
    res,
    200,
    `<ListPartsResult xmlns="${S3_XMLNS}">` +
      `<Bucket>${escapeXml(bucket)}</Bucket><Key>${escapeXml(key)}</Key><UploadId>${escapeXml(uploadId)}</UploadId>` +
      `<PartNumberMarker>${marker}</PartNumberMarker><NextPartNumberMarker>${nextMarker}</NextPartNumberMarker>` +
      `<MaxParts>${maxParts}</MaxParts><IsTruncated>${isTruncated}</IsTruncated>` +
      partsXml +
      `</ListPartsResult>`,
  );
}

/** AbortMultipartUpload, https://docs.aws.amazon.com/AmazonS3/latest/API/API_AbortMultipartUpload.html */
async function abortUpload(
  res: http.ServerResponse,
  directory: string,
  target: { bucket: string; key: string; uploadId: string },
) {
  const dir = await findUpload(directory, target.bucket, target.key, target.uploadId);
  if (!dir) return sendNoSuchUpload(res, target.uploadId);
  await fs.promises.rm(dir, { recursive: true, force: true });
  res.writeHead(204);
  res.end();
}

/** `{ bucket, key }` of a path-style object URL, or null (service/bucket URLs, bad escapes). */
function parseObjectPath(pathname: string): { bucket: string; key: string } | null {
  const [, bucket, ...keySegments] = pathname.split("/");
  if (!bucket || keySegments.length === 0) return null;
  try {
    const key = keySegments.map((segment) => decodeURIComponent(segment)).join("/");
    return key ? { bucket: decodeURIComponent(bucket), key } : null;
  } catch {
    return null;
  }
}

function forwardHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

function proxy(req: http.IncomingMessage, res: http.ServerResponse, upstreamPort: number, agent: http.Agent) {
  const upstream = http.request({
    host: "127.0.0.1",
    port: upstreamPort,
    method: req.method,
    path: req.url,
    headers: forwardHeaders(req.headers),
    agent,
  });
  upstream.on("response", (upstreamRes) => {
    res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, forwardHeaders(upstreamRes.headers));
    pipeline(upstreamRes, res, () => {});
  });
  upstream.on("error", (error) => {
    if (res.headersSent) {
      res.destroy(error);
    } else {
      sendError(res, 502, "BadGateway", `s3rver: ${error.message}`);
    }
  });
  // Streams the body with backpressure; a client that goes away aborts the upstream request.
  pipeline(req, upstream, () => {});
  res.on("close", () => {
    if (!res.writableFinished) upstream.destroy();
  });
}

/** `ports`: fixed ports for the endpoint and its s3rver (scripts/scale-out/start.mjs); any free ones by default. */
export async function startS3rver(bucket = "skribent-test", ports: { port?: number; s3rverPort?: number } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-s3rver-"));
  const server = new S3rver({
    port: ports.s3rverPort ?? 0,
    address: "127.0.0.1",
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  const { port: s3rverPort } = await server.run();
  const agent = new http.Agent({ keepAlive: true });

  const front = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const uploadId = url.searchParams.get("uploadId");
    const target = uploadId !== null ? parseObjectPath(url.pathname) : null;
    if (uploadId !== null && target && (req.method === "GET" || req.method === "DELETE")) {
      // Neither request carries a body worth reading; drain whatever came.
      req.resume();
      const handled =
        req.method === "GET"
          ? listParts(res, dir, { ...target, uploadId, query: url.searchParams })
          : abortUpload(res, dir, { ...target, uploadId });
      handled.catch((error: Error) => {
        if (res.headersSent) res.destroy(error);
        else sendError(res, 500, "InternalError", error.message);
      });
      return;
    }
    proxy(req, res, s3rverPort, agent);
  });
  const sockets = new Set<Socket>();
  front.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    front.once("error", reject);
    front.listen(ports.port ?? 0, "127.0.0.1", () => {
      front.off("error", reject);
      resolve();
    });
  });
  const { port } = front.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    async close() {
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      agent.destroy();
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
