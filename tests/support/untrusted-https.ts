import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { TLSSocket } from "node:tls";
import { promisify } from "node:util";

// Servers whose certificate no client trusts, for ASVS 12.3.2 ("TLS clients validate server certificates"): every
// outbound client pointed at one must break off the handshake before it sends a byte of its request — no
// credentials, no audio, no patient id. The certificate is made at test time with the openssl CLI, self-signed,
// for 127.0.0.1 and localhost: valid in every way except that nobody vouches for it, so the only reason to refuse
// it is the missing trust (a client told to trust it, with `ca: cert`, gets through — untrusted-https.test.ts).
// - startUntrustedHttpsServer: HTTPS and WSS on one port. `requests` records every HTTP request and WebSocket
//   upgrade that got past the handshake (answered 200 "{}", an upgrade is cut); `refusedHandshakes` counts the
//   clients that broke the handshake off, which shows a client did get as far as TLS.
// - startUntrustedPostgresServer: PostgreSQL's SSLRequest answered "S", then TLS; `requests` records the first
//   message after the handshake (the startup packet, which names the user and database).
// `certificateErrorCode(error)` finds the OpenSSL verification code anywhere in an error's cause chain.

const run = promisify(execFile);

export type UntrustedCertificate = { key: string; cert: string };

/** A fresh self-signed P-256 certificate for 127.0.0.1 and localhost, valid for a day; the key never leaves memory. */
export async function makeUntrustedCertificate(): Promise<UntrustedCertificate> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "skribent-untrusted-"));
  try {
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    // -addext: without subjectAltName Node would refuse the name as well, and the control test could not tell
    // the two refusals apart.
    await run("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ]);
    return { key: await readFile(key, "utf8"), cert: await readFile(cert, "utf8") };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export type ReachedRequest = { method: string; path: string; upgrade: boolean };

export type UntrustedHttpsServer = {
  /** https://127.0.0.1:<port> */
  url: string;
  /** wss://127.0.0.1:<port> */
  wsUrl: string;
  port: number;
  /** The certificate (PEM), for a client told to trust it. */
  cert: string;
  /** Requests and upgrades that got past the handshake. */
  requests: ReachedRequest[];
  readonly refusedHandshakes: number;
  close(): Promise<void>;
};

export async function startUntrustedHttpsServer(): Promise<UntrustedHttpsServer> {
  const { key, cert } = await makeUntrustedCertificate();
  const requests: ReachedRequest[] = [];
  let refusedHandshakes = 0;
  const server = createHttpsServer({ key, cert }, (req, res) => {
    requests.push({ method: req.method ?? "", path: req.url ?? "", upgrade: false });
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end("{}");
  });
  server.on("upgrade", (req, socket: Socket) => {
    requests.push({ method: req.method ?? "", path: req.url ?? "", upgrade: true });
    socket.destroy();
  });
  server.on("tlsClientError", () => refusedHandshakes++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    wsUrl: `wss://127.0.0.1:${port}`,
    port,
    cert,
    requests,
    get refusedHandshakes() {
      return refusedHandshakes;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

export type UntrustedPostgresServer = {
  port: number;
  cert: string;
  /** The first message of each connection that got past the handshake (its length, in bytes). */
  requests: { bytes: number }[];
  readonly refusedHandshakes: number;
  close(): Promise<void>;
};

/** SSLRequest: length 8, then the code 80877103 (PostgreSQL protocol, §55.2.10). */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

export async function startUntrustedPostgresServer(): Promise<UntrustedPostgresServer> {
  const { key, cert } = await makeUntrustedCertificate();
  const requests: { bytes: number }[] = [];
  let refusedHandshakes = 0;
  const sockets = new Set<Socket>();
  const server: Server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.once("data", (first: Buffer) => {
      // A client that starts without SSLRequest would send its startup packet in the clear: that counts too.
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) {
        requests.push({ bytes: first.length });
        socket.destroy();
        return;
      }
      socket.write("S");
      const secure = new TLSSocket(socket, { isServer: true, key, cert });
      let handshaken = false;
      secure.on("secure", () => (handshaken = true));
      secure.on("error", () => secure.destroy());
      secure.on("close", () => {
        if (!handshaken) refusedHandshakes++;
      });
      secure.once("data", (message: Buffer) => {
        requests.push({ bytes: message.length });
        secure.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cert,
    requests,
    get refusedHandshakes() {
      return refusedHandshakes;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/**
 * The OpenSSL verification code (e.g. DEPTH_ZERO_SELF_SIGNED_CERT) in an error or its causes, else null. The app's
 * engine errors keep their cause in `options.cause`.
 */
export function certificateErrorCode(error: unknown): string | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return code;
    const { cause, options } = current as { cause?: unknown; options?: { cause?: unknown } };
    current = cause ?? options?.cause;
  }
  return null;
}
