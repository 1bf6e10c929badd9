// The bridge between Express and Remix: @remix-run/express 2.17.5's createRequestHandler (MIT, Remix Software Inc.),
// which exports nothing else, so its two helpers are here — with one difference: an answer the app made whole (a page
// rendered into one buffer, a JSON answer: `knownBody` of the build's entry, services/web/known-body.server.ts) goes
// out in one write, instead of being read back through the Response's web stream (for a 14-byte JSON answer that was
// a sixth of its work). Every other answer — a file, an event stream, a redirect — is sent as the adapter sends it.
import {
  createReadableStreamFromReadable,
  createRequestHandler as createRemixHandler,
  writeReadableStreamToWritable,
} from "@remix-run/node";

export function createRequestHandler({ build, mode = process.env.NODE_ENV }) {
  const handleRequest = createRemixHandler(build, mode);
  const knownBody = build.entry.module.knownBody ?? (() => undefined);
  return async (req, res, next) => {
    try {
      const response = await handleRequest(createRemixRequest(req, res));
      await sendRemixResponse(res, response, knownBody(response));
    } catch (error) {
      // Express does not take async handlers: the error goes on by hand.
      next(error);
    }
  };
}

function createRemixHeaders(requestHeaders) {
  const headers = new Headers();
  for (const [key, values] of Object.entries(requestHeaders)) {
    if (!values) continue;
    if (Array.isArray(values)) for (const value of values) headers.append(key, value);
    else headers.set(key, values);
  }
  return headers;
}

function createRemixRequest(req, res) {
  // req.hostname has no port: it comes from X-Forwarded-Host or Host.
  const [, forwardedPort] = req.get("X-Forwarded-Host")?.split(":") ?? [];
  const [, hostPort] = req.get("host")?.split(":") ?? [];
  const fromForwarded = Number.parseInt(forwardedPort, 10);
  const fromHost = Number.parseInt(hostPort, 10);
  const port = Number.isSafeInteger(fromForwarded) ? fromForwarded : Number.isSafeInteger(fromHost) ? fromHost : "";
  // req.hostname respects the "trust proxy" setting; req.originalUrl is the full path.
  const url = new URL(`${req.protocol}://${req.hostname}${port ? `:${port}` : ""}${req.originalUrl}`);
  let controller = new AbortController();
  const init = { method: req.method, headers: createRemixHeaders(req.headers), signal: controller.signal };
  if (req.method !== "GET" && req.method !== "HEAD") {
    init.body = createReadableStreamFromReadable(req);
    init.duplex = "half";
  }
  // Loaders and actions are aborted when the answer can no longer be written ("close" without "finish").
  res.on("finish", () => (controller = null));
  res.on("close", () => controller?.abort());
  return new Request(url.href, init);
}

async function sendRemixResponse(res, response, body) {
  res.statusMessage = response.statusText;
  res.status(response.status);
  for (const [key, value] of response.headers.entries()) res.append(key, value);
  if (body) return void res.end(res.req.method === "HEAD" ? undefined : body);
  if (response.headers.get("Content-Type")?.match(/text\/event-stream/i)) res.flushHeaders();
  if (response.body) await writeReadableStreamToWritable(response.body, res);
  else res.end();
}
