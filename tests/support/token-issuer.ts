import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from "jose";

/**
 * A minimal identity provider for access-token tests: OpenID discovery and a JWKS on loopback, and tokens
 * signed with its key carrying exactly the claims a test gives — including claims real providers leave out.
 */
export async function startTokenIssuer() {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "test-key", alg: "RS256", use: "sig" };
  const server = http.createServer((req, res) => {
    const body =
      req.url === "/.well-known/openid-configuration"
        ? {
            issuer: url,
            authorization_endpoint: `${url}/auth`,
            token_endpoint: `${url}/token`,
            jwks_uri: `${url}/jwks`,
          }
        : req.url === "/jwks"
          ? { keys: [jwk] }
          : null;
    res.writeHead(body ? 200 : 404, { "Content-Type": "application/json" });
    res.end(JSON.stringify(body ?? { error: "not_found" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    /** The public key as PEM, as an attacker would find it (to HMAC-sign a token with it: alg confusion). */
    publicKeyPem: await exportSPKI(publicKey),
    /** An RS256 access token for `audience`, valid for five minutes (from `issuedAt`, seconds; default now). */
    sign: (claims: JWTPayload & { sub: string }, audience: string, issuedAt = Math.floor(Date.now() / 1000)) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", kid: "test-key" })
        .setIssuer(url)
        .setAudience(audience)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + 300)
        .sign(privateKey),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
