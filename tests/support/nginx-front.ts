import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { INSTANCE_HOST } from "../../scripts/internal-ca.mjs";
import { freePort } from "./free-port";

// The shipped balancer configuration (deploy/nginx/skribent.conf) run as it is, by Debian's nginx on loopback, in
// front of an app the test started: only its example host addresses, certificate paths and include path are
// replaced, each of which must be found — a changed file fails here rather than going untested. The app serves
// HTTPS (TLS_CERT_FILE, TLS_KEY_FILE) with a certificate for INSTANCE_HOST, the name the file verifies, from the
// internal CA the test names (`instanceCa`, scripts/internal-ca.mjs).

const NGINX = process.env.NGINX ?? "/usr/sbin/nginx";
const DEPLOY = path.resolve("deploy/nginx");
export const SERVER_NAME = "skribent.example.org";

function replaceOnce(text: string, from: string, to: string) {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0)
    throw new Error(`deploy/nginx/skribent.conf: "${from}" not found once`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/** A self-signed certificate for the server name and 127.0.0.1, made with Debian's openssl. */
function makeCertificate(dir: string) {
  const cert = path.join(dir, "fullchain.pem");
  const key = path.join(dir, "privkey.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", key, "-out", cert].concat([
      "-subj",
      `/CN=${SERVER_NAME}`,
      "-addext",
      `subjectAltName=DNS:${SERVER_NAME},IP:127.0.0.1`,
    ]),
    { stdio: "ignore" },
  );
  return { cert, key };
}

async function reachable(port: number, ca: string) {
  return new Promise<boolean>((resolve) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername: SERVER_NAME, ca });
    socket.once("secureConnect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export type NginxFront = {
  httpPort: number;
  httpsPort: number;
  /** The certificate to trust (PEM). */
  ca: string;
  /** What nginx wrote to its error log so far. */
  errorLog(): string;
  stop(): Promise<void>;
};

/**
 * Starts nginx with the shipped configuration in front of the app at `appPort`, trusting the instance certificates
 * `instanceCa` (a PEM file) issued; null leaves its `proxy_ssl_trusted_certificate` out.
 */
export async function startNginxFront(
  appPort: number,
  { instanceCa }: { instanceCa: string | null },
): Promise<NginxFront> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-nginx-"));
  const { cert, key } = makeCertificate(dir);
  const [httpPort, httpsPort] = [await freePort(), await freePort()];

  let site = fs.readFileSync(path.join(DEPLOY, "skribent.conf"), "utf8");
  site = replaceOnce(site, "listen 80;\n    listen [::]:80;", `listen 127.0.0.1:${httpPort};`);
  site = replaceOnce(
    site,
    "listen 443 ssl http2;\n    listen [::]:443 ssl http2;",
    `listen 127.0.0.1:${httpsPort} ssl http2;`,
  );
  site = replaceOnce(site, "/etc/ssl/skribent/fullchain.pem", cert);
  site = replaceOnce(site, "/etc/ssl/skribent/privkey.pem", key);
  site =
    instanceCa === null
      ? replaceOnce(site, "proxy_ssl_trusted_certificate /etc/ssl/skribent/internal-ca.pem;", "")
      : replaceOnce(site, "/etc/ssl/skribent/internal-ca.pem", instanceCa);
  // The name every instance's certificate must be for stays as shipped; it must be there, once.
  site = replaceOnce(site, `proxy_ssl_name ${INSTANCE_HOST};`, `proxy_ssl_name ${INSTANCE_HOST};`);
  site = replaceOnce(site, "server 10.0.0.11:3000", `server 127.0.0.1:${appPort}`);
  site = replaceOnce(site, "    server 10.0.0.12:3000 max_fails=1 fail_timeout=2s;\n", "");
  site = replaceOnce(site, "/etc/nginx/conf.d/skribent-locations.conf", path.join(DEPLOY, "skribent-locations.conf"));
  fs.writeFileSync(path.join(dir, "skribent.conf"), site);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((name) => `${name}_temp_path ${path.join(dir, name)};`)
    .join("\n  ");
  fs.writeFileSync(
    path.join(dir, "nginx.conf"),
    `worker_processes 1;\nevents { worker_connections 256; }\nhttp {\n  access_log off;\n  ${temp}\n  include ${path.join(dir, "skribent.conf")};\n}\n`,
  );

  const child: ChildProcess = spawn(
    NGINX,
    ["-p", dir, "-c", path.join(dir, "nginx.conf"), "-g", `daemon off; pid ${dir}/nginx.pid; error_log stderr;`],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let errors = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (errors += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ca = fs.readFileSync(cert, "utf8");

  for (let attempt = 0; !(await reachable(httpsPort, ca)); attempt += 1) {
    if (child.exitCode !== null || attempt > 200) {
      child.kill("SIGKILL");
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start: ${errors || `exit ${child.exitCode}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    httpPort,
    httpsPort,
    ca,
    errorLog: () => errors,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
