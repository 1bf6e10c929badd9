// How server/index.mjs listens and stops, apart from server/index.mjs so the tests run exactly this around the app they built
// (tests/support/server-app.ts): HTTP, or HTTPS when TLS_CERT_FILE/TLS_KEY_FILE are set (server/tls.mjs, ADR 0022)
// — the same Express app, the same WebSocket upgrade of the live door, the same graceful stop on either.
import http from "node:http";
import https from "node:https";
import { TLS_CIPHERS, TLS_MIN_VERSION } from "./tls.mjs";

// A graceful stop (README "Production topology"): a load balancer's instance is stopped while requests are in
// flight on it (a refinement waiting for the model, an upload check). On drain() the server stops accepting
// connections and lets the requests it has finish — at most DRAIN_MS; server-sent event streams are not waited
// for, their clients reconnect elsewhere. The app's own shutdown (live runs, worker, database) comes after, in
// server/index.mjs.
export const DRAIN_MS = 20_000;

/**
 * Starts listening; resolves once the port is open.
 * @param {{
 *   app: http.RequestListener;
 *   upgrade: (req: http.IncomingMessage, socket: import("node:stream").Duplex, head: Buffer) => unknown;
 *   port: number;
 *   host?: string;
 *   tls?: { cert: Buffer; key: Buffer };
 * }} options
 * @returns {Promise<{ server: http.Server | https.Server; drain: () => Promise<void> }>}
 */
export function listen({ app, upgrade, port, host, tls }) {
  const server = tls
    ? https.createServer({ ...tls, minVersion: TLS_MIN_VERSION, ciphers: TLS_CIPHERS, honorCipherOrder: true }, app)
    : http.createServer(app);
  server.on("upgrade", (req, socket, head) => void upgrade(req, socket, head));

  const open = new Set();
  let draining = false;
  server.on("request", (_req, res) => {
    open.add(res);
    res.once("close", () => open.delete(res));
    // Keep-alive connections end with this answer, so the balancer sends the next request elsewhere.
    if (draining) res.setHeader("Connection", "close");
  });
  /** @param {http.ServerResponse} res */
  const streaming = (res) => String(res.getHeader("Content-Type") ?? "").startsWith("text/event-stream");

  async function drain() {
    draining = true;
    server.close();
    const until = Date.now() + DRAIN_MS;
    while (Date.now() < until && [...open].some((res) => !streaming(res))) {
      server.closeIdleConnections();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const listening = () => {
      server.off("error", reject);
      resolve({ server, drain });
    };
    if (host) server.listen(port, host, listening);
    else server.listen(port, listening);
  });
}
