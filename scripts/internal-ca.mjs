// An internal certificate authority made with Debian's openssl at run time, for the hop between the balancer and
// the app instances (ADR 0022): the CA the balancer trusts (nginx's proxy_ssl_trusted_certificate) and the
// instances' certificates it signs (TLS_CERT_FILE, TLS_KEY_FILE). The scale-out proof and the tests use it; in
// production the operator's own internal CA (or a service mesh's) takes its place. P-256 keys: fast to make, and
// accepted by nginx, Node and OpenSSL's default security level alike.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** The name the shipped nginx configuration verifies on every instance (deploy/nginx/skribent.conf, proxy_ssl_name). */
export const INSTANCE_HOST = "skribent-app.internal";

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** @param {string[]} args */
function openssl(args) {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * A new CA in `dir` (created if missing), valid for two days. `issue(name)` signs a server certificate for that DNS
 * name (and 127.0.0.1), valid for a day, and returns the paths of its PEM files; `file` names them (default: name).
 * With `client: true` it is a client certificate instead, whose common name is `name` (for instance the database role
 * a client signs in as with PostgreSQL's `cert` authentication).
 * @param {string} dir
 * @param {{ commonName?: string }} [options]
 */
export function makeInternalCa(dir, { commonName = "Skribent internal CA (test)" } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const caFile = path.join(dir, "ca.pem");
  const caKey = path.join(dir, "ca-key.pem");
  openssl(["req", "-x509", ...EC_KEY, "-keyout", caKey, "-out", caFile, "-days", "2", "-subj", `/CN=${commonName}`]);
  let serial = 1;
  return {
    caFile,
    /**
     * @param {string} name
     * @param {{ file?: string, client?: boolean }} [options]
     */
    issue(name, { file = name, client = false } = {}) {
      const certFile = path.join(dir, `${file}.pem`);
      const keyFile = path.join(dir, `${file}-key.pem`);
      const request = path.join(dir, `${file}.csr`);
      const extensions = path.join(dir, `${file}.ext`);
      fs.writeFileSync(
        extensions,
        `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n` +
          (client
            ? "extendedKeyUsage=clientAuth\n"
            : `extendedKeyUsage=serverAuth\nsubjectAltName=DNS:${name},IP:127.0.0.1\n`),
      );
      openssl(["req", "-new", ...EC_KEY, "-keyout", keyFile, "-out", request, "-subj", `/CN=${name}`]);
      const signing = ["-CA", caFile, "-CAkey", caKey, "-set_serial", String(serial++), "-days", "1"];
      openssl(["x509", "-req", "-in", request, ...signing, "-extfile", extensions, "-out", certFile]);
      return { certFile, keyFile };
    },
  };
}
