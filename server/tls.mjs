// TLS_CERT_FILE and TLS_KEY_FILE (ADR 0022; ASVS 12.3.1, 12.3.3): with both set, server/index.mjs serves HTTPS itself, so
// the hop from the balancer to the instance is encrypted too and the balancer can check who it talks to. Read by
// server/index.mjs before the build is imported, like LOG_FORMAT by server/log.mjs: a wrong setting stops the start before
// the boot opens the database, with the same readable list as config/config.server.ts ("Invalid configuration: …"), each
// line naming the variable — never a stack trace. The worker serves nothing and never reads them.
import { X509Certificate, createPrivateKey } from "node:crypto";
import fs from "node:fs";
import tls from "node:tls";

/** The oldest protocol the server accepts. */
export const TLS_MIN_VERSION = "TLSv1.2";

/**
 * The suites the instance accepts, as the shipped balancer does for browsers (deploy/nginx/skribent.conf): TLS 1.3's
 * three, and under TLS 1.2 only forward-secret AEAD suites. Node's default list also accepts CBC suites and RSA key
 * exchange under TLS 1.2.
 */
export const TLS_CIPHERS = [
  "TLS_AES_128_GCM_SHA256",
  "TLS_AES_256_GCM_SHA384",
  "TLS_CHACHA20_POLY1305_SHA256",
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
].join(":");

export class TlsSettingsError extends Error {
  /** @param {string[]} problems */
  constructor(problems) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.problems = problems;
  }
}

/** @type {Record<string, string>} */
const READ_ERRORS = {
  ENOENT: "does not exist",
  EACCES: "cannot be read by this process (permission denied)",
  EPERM: "cannot be read by this process (permission denied)",
  EISDIR: "is a directory, not a PEM file",
};

/**
 * @param {string} name
 * @param {string} file
 * @returns {{ pem: Buffer } | { problem: string }}
 */
function readPem(name, file) {
  try {
    if (fs.statSync(file).isDirectory()) return { problem: `${name}: ${file} ${READ_ERRORS.EISDIR}` };
    return { pem: fs.readFileSync(file) };
  } catch (error) {
    const code = /** @type {{ code?: string }} */ (error).code ?? "";
    return { problem: `${name}: ${file} ${READ_ERRORS[code] ?? `cannot be read (${code || String(error)})`}` };
  }
}

/**
 * The server's certificate chain and key from TLS_CERT_FILE and TLS_KEY_FILE, checked: both or neither set, each
 * file readable, a certificate and an unencrypted private key in them, the key the certificate's. Undefined when
 * neither is set (plain HTTP, as before). Throws TlsSettingsError otherwise. Empty values count as unset.
 * @param {Record<string, string | undefined>} [env]
 * @returns {{ cert: Buffer; key: Buffer } | undefined}
 */
export function readTlsSettings(env = process.env) {
  const certFile = env.TLS_CERT_FILE || undefined;
  const keyFile = env.TLS_KEY_FILE || undefined;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    const [missing, given] = certFile ? ["TLS_KEY_FILE", "TLS_CERT_FILE"] : ["TLS_CERT_FILE", "TLS_KEY_FILE"];
    throw new TlsSettingsError([`${missing}: is required with ${given} (set both for HTTPS, neither for HTTP)`]);
  }
  const cert = readPem("TLS_CERT_FILE", certFile);
  const key = readPem("TLS_KEY_FILE", keyFile);
  const unread = [cert, key].flatMap((read) => ("problem" in read ? [read.problem] : []));
  if (!("pem" in cert) || !("pem" in key)) throw new TlsSettingsError(unread);

  const problems = [];
  let certificate;
  let privateKey;
  try {
    certificate = new X509Certificate(cert.pem);
  } catch {
    problems.push(`TLS_CERT_FILE: ${certFile} holds no PEM certificate`);
  }
  try {
    privateKey = createPrivateKey(key.pem);
  } catch {
    problems.push(`TLS_KEY_FILE: ${keyFile} holds no unencrypted PEM private key`);
  }
  if (!certificate || !privateKey) throw new TlsSettingsError(problems);
  if (!certificate.checkPrivateKey(privateKey))
    throw new TlsSettingsError([`TLS_KEY_FILE: ${keyFile} is not the private key of the certificate in TLS_CERT_FILE`]);
  try {
    // What OpenSSL itself refuses when the server starts (a key too small for its security level, …).
    tls.createSecureContext({ cert: cert.pem, key: key.pem, minVersion: TLS_MIN_VERSION });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TlsSettingsError([`TLS_CERT_FILE: ${certFile} cannot be used with its key (${reason})`]);
  }
  return { cert: cert.pem, key: key.pem };
}
