import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { makeInternalCa } from "../../scripts/internal-ca.mjs";
import { freePort } from "./free-port";

// A PostgreSQL server of its own (Debian's binaries, which the machine's cluster comes from) that takes TLS only and
// knows the app's role only by a client certificate (pg_hba `hostssl … cert`): the database authentication ASVS 5.0
// 13.2.1 asks for instead of a password. The CA, the server's certificate and the client's ("skribent") are made
// with openssl at run time. As root the server runs as the postgres user (initdb refuses root), else as the caller.

const BIN = `/usr/lib/postgresql/${fs.readdirSync("/usr/lib/postgresql").sort().at(-1)}/bin`;

export type CertPostgres = {
  port: number;
  ca: string;
  client: { certFile: string; keyFile: string };
  /** A DATABASE_URL for the role `skribent`, verifying the server and signing in with the client certificate. */
  url: (options?: { withClientCertificate?: boolean }) => string;
  stop: () => Promise<void>;
};

const root = typeof process.getuid === "function" && process.getuid() === 0;
const asServerUser = (args: string[]): [string, string[]] =>
  root ? ["runuser", ["-u", "postgres", "--", ...args]] : [args[0]!, args.slice(1)];

export async function startCertPostgres(): Promise<CertPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-pgcert-"));
  const certs = makeInternalCa(path.join(dir, "certs"), { commonName: "Skribent database CA (test)" });
  const server = certs.issue("localhost", { file: "server" });
  const client = certs.issue("skribent", { file: "client", client: true });
  const data = path.join(dir, "data");
  if (root) execFileSync("chown", ["-R", "postgres:postgres", dir]);
  fs.chmodSync(dir, 0o755);
  // The server's key must be its own and private; the client's stays the caller's (node-postgres reads it).
  fs.chmodSync(server.keyFile, 0o600);
  if (root) execFileSync("chown", ["root:root", client.keyFile, client.certFile]);
  const [initdb, initArgs] = asServerUser([
    `${BIN}/initdb`,
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
  ]);
  execFileSync(initdb, initArgs, { stdio: "ignore" });
  const port = await freePort();
  fs.appendFileSync(
    path.join(data, "postgresql.conf"),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "ssl = on",
      `ssl_cert_file = '${server.certFile}'`,
      `ssl_key_file = '${server.keyFile}'`,
      `ssl_ca_file = '${certs.caFile}'`,
      "fsync = off",
    ].join("\n") + "\n",
  );
  // Over TCP: TLS with a client certificate whose common name is the role, nothing else; the socket is for setup.
  fs.writeFileSync(
    path.join(data, "pg_hba.conf"),
    ["local all postgres trust", "hostssl all skribent 127.0.0.1/32 cert", "host all all 0.0.0.0/0 reject"].join("\n") +
      "\n",
  );
  const [postgres, args] = asServerUser([`${BIN}/postgres`, "-D", data]);
  const child = spawn(postgres, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  await ready(child, dir, port, () => stderr);
  const admin = new pg.Client({ host: dir, port, user: "postgres", database: "postgres" });
  await admin.connect();
  await admin.query("create role skribent login");
  await admin.query("create database skribent owner skribent");
  await admin.end();
  const query = (withCert: boolean) =>
    new URLSearchParams({
      sslmode: "verify-full",
      sslrootcert: certs.caFile,
      ...(withCert ? { sslcert: client.certFile, sslkey: client.keyFile } : {}),
    }).toString();
  return {
    port,
    ca: certs.caFile,
    client,
    url: ({ withClientCertificate = true } = {}) =>
      `postgres://skribent@127.0.0.1:${port}/skribent?${query(withClientCertificate)}`,
    stop: async () => {
      await stopChild(child, data);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function ready(child: ChildProcess, dir: string, port: number, stderr: () => string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}: ${stderr()}`);
    const probe = new pg.Client({ host: dir, port, user: "postgres", database: "postgres" });
    try {
      await probe.connect();
      await probe.end();
      return;
    } catch (error) {
      await probe.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not start within 30 s: ${String(error)} ${stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Fast shutdown (SIGINT) of the postmaster itself: as root the child is runuser, which does not pass it on. */
function stopChild(child: ChildProcess, data: string) {
  if (child.exitCode !== null) return Promise.resolve();
  const postmaster = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  return new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    process.kill(postmaster, "SIGINT");
  });
}
