// The counting proxy: both tools send every request through it.
import http from "node:http";

/**
 * `proxy.guard(url, form)` may name a reason to answer 403 without forwarding (`form`: the fields of an urlencoded
 * POST, else null). wapiti 3.0.4's own `-x` exclusions crash on Python 3.11 ("global flags not at the start of
 * the expression"), and its crawler submits every form it finds with the values it found, so what must not happen
 * during the scan is kept from happening here.
 */
export function startCountingProxy(allowedOrigins) {
  const counts = { requests: 0, byStatus: new Map(), serverErrors: [], failed: [], refused: 0, blocked: new Map() };
  const state = { guard: undefined };
  const proxyAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const server = http.createServer(async (req, res) => {
    let target;
    try {
      target = new URL(req.url);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (!allowedOrigins.includes(target.origin)) {
      counts.refused++;
      res.writeHead(502, { "content-type": "text/plain" }).end("destination not allowed by the bench proxy");
      return;
    }
    let body;
    if (state.guard) {
      let form = null;
      if (req.method === "POST" && /urlencoded/i.test(req.headers["content-type"] ?? "")) {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        body = Buffer.concat(chunks);
        form = new URLSearchParams(body.toString("utf8"));
      }
      const reason = state.guard(target, form);
      if (reason) {
        const key = `${req.method} ${target.pathname} (${reason})`;
        counts.blocked.set(key, (counts.blocked.get(key) ?? 0) + 1);
        res.writeHead(403, { "content-type": "text/plain" }).end(`excluded from the scan by the bench: ${reason}`);
        return;
      }
    }
    counts.requests++;
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    if (body) headers["content-length"] = String(body.length);
    const upstream = http.request(target, { method: req.method, headers, agent: proxyAgent }, (answer) => {
      const status = answer.statusCode ?? 0;
      counts.byStatus.set(status, (counts.byStatus.get(status) ?? 0) + 1);
      if (status >= 500) counts.serverErrors.push(`${req.method} ${target.pathname} → ${status}`);
      res.writeHead(status, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.setTimeout(60_000, () => upstream.destroy(new Error("upstream timeout")));
    upstream.on("error", (error) => {
      counts.byStatus.set("error", (counts.byStatus.get("error") ?? 0) + 1);
      counts.failed.push(`${req.method} ${target.pathname}: ${error.code ?? error.message}`);
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    if (body) upstream.end(body);
    else req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        counts,
        set guard(fn) {
          state.guard = fn;
        },
        snapshot: () => ({ requests: counts.requests, byStatus: new Map(counts.byStatus) }),
        close: () =>
          new Promise((done) => {
            proxyAgent.destroy();
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    }),
  );
}

/** Requests and statuses between two snapshots of the proxy's counts. */
export function delta(before, after) {
  const byStatus = new Map();
  for (const [status, n] of after.byStatus) {
    const d = n - (before.byStatus.get(status) ?? 0);
    if (d) byStatus.set(status, d);
  }
  return { requests: after.requests - before.requests, byStatus };
}

export const statusLine = (byStatus) =>
  [...byStatus]
    .sort(([a], [b]) => String(a).localeCompare(String(b)))
    .map(([status, n]) => `${status}×${n}`)
    .join(" ");

// ---------------------------------------------------------------------------------------------------------
// wapiti's SSRF module needs an endpoint that records whether the target called it; this is a local one
// (wapiti's default is on the Internet). It answers get_ssrf.php as wapiti expects.

export function startSsrfEndpoint() {
  const hits = new Map(); // session id → { path id → { hex param → [call] } }
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/get_ssrf.php") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(hits.get(url.searchParams.get("id")) ?? {}));
      return;
    }
    const match = /^\/ssrf\/([^/]+)\/([^/]+)\/([^/]+)\//.exec(url.pathname);
    if (match) {
      const [, session, pathId, hexParam] = match;
      const bySession = hits.get(session) ?? {};
      hits.set(session, bySession);
      bySession[pathId] ??= {};
      (bySession[pathId][hexParam] ??= []).push({
        url: req.url,
        date: new Date().toISOString(),
        ip: req.socket.remoteAddress,
        method: req.method,
        size: Number(req.headers["content-length"] ?? 0),
      });
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/`,
        calls: () => [...hits.values()].flatMap((s) => Object.values(s).flatMap((p) => Object.values(p).flat())),
        close: () => new Promise((done) => server.close(() => done())),
      }),
    ),
  );
}
