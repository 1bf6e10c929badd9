// nginx: round-robin over A and B, with the locations the repository ships for production
// (deploy/nginx/skribent-locations.conf: WebSocket upgrade for the live door, 70 MB bodies streamed, forwarding
// headers — X-Forwarded-For overwritten, not appended to, which the instances' TRUST_PROXY=loopback takes as the
// client — and the request id — and TLS to the instances, verified against the internal CA and INSTANCE_HOST, which
// the server block names as skribent.conf does). Only the TLS server towards the clients (deploy/nginx/skribent.conf)
// is left out here; it has its own test (tests/integration/deploy-nginx.test.ts).
import fs from "node:fs";
import path from "node:path";
import { INSTANCE_HOST } from "../internal-ca.mjs";
import { APP, NGINX, PORTS, ROOT } from "./config.mjs";
import { internalCa } from "./instances.mjs";
import { startProcess, tmp, waitFor } from "./processes.mjs";
import { note } from "./report.mjs";

function nginxConfig(dir) {
  return `worker_processes 1;
events { worker_connections 512; }
http {
  log_format scale '$msec $request_method $uri $status $upstream_addr $upstream_status $request_time';
  access_log ${dir}/access.log scale;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $skribent_connection_upgrade { default upgrade; '' close; }
  upstream skribent {
    server 127.0.0.1:${PORTS.A} max_fails=1 fail_timeout=2s;
    server 127.0.0.1:${PORTS.B} max_fails=1 fail_timeout=2s;
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${PORTS.nginx};
    proxy_ssl_trusted_certificate ${internalCa.caFile};
    proxy_ssl_name ${INSTANCE_HOST};
    include ${path.join(ROOT, "deploy/nginx/skribent-locations.conf")};
  }
}
`;
}

/** nginx in the foreground, unprivileged, everything under the run's directory; up once it answers through A or B. */
export async function startNginx() {
  const nginxDir = path.join(tmp, "nginx");
  fs.mkdirSync(nginxDir);
  fs.writeFileSync(path.join(nginxDir, "nginx.conf"), nginxConfig(nginxDir));
  const nginx = startProcess("nginx", NGINX, [
    "-p",
    nginxDir,
    "-c",
    path.join(nginxDir, "nginx.conf"),
    "-g",
    `daemon off; pid ${nginxDir}/nginx.pid; error_log stderr;`,
  ]);
  await waitFor("nginx up", () => fetch(`${APP}/resources/healthz`).then((r) => r.ok));
  note(
    `nginx up on :${PORTS.nginx} (pid ${nginx.pid}), round-robin over A :${PORTS.A} and B :${PORTS.B}, over verified TLS`,
  );
}

/** Which instance nginx handed each request whose path matches (from its access log). */
export function nginxLog(match) {
  const lines = fs
    .readFileSync(path.join(tmp, "nginx", "access.log"), "utf8")
    .trim()
    .split("\n");
  return lines
    .map((line) => line.split(" "))
    .filter(([, , uri]) => match.test(uri))
    .map(([, method, uri, status, upstream]) => ({
      method,
      uri,
      status: Number(status),
      upstreams: upstream
        .split(", ")
        .map((u) => (u.endsWith(`:${PORTS.A}`) ? "A" : u.endsWith(`:${PORTS.B}`) ? "B" : u)),
    }));
}
