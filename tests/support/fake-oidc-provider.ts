import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT, type JWTPayload } from "jose";

/**
 * A loopback OpenID provider that speaks the protocol the way real ones do (OIDC Core §3.1, RFC 6749, RFC 7636):
 * discovery, a JWKS, an authorization endpoint that approves at once (or denies) and sends the browser back to a
 * registered redirect_uri, and a token endpoint that checks the client, the PKCE verifier, the redirect_uri and
 * spends each code once. A per-test `fault` makes the ID token lie in one way, so a test can show the relying
 * party refuses it.
 */
export type IdTokenFault =
  | "wrong-nonce"
  | "no-nonce"
  | "wrong-audience"
  | "expired"
  | "issued-in-future"
  | "wrong-issuer"
  | "other-key"
  | "alg-none"
  | "hs256-with-public-key"
  | "no-sub"
  /** The ID token minted for the previous code: valid, signed, but from another sign-in. */
  | "replay-previous";

export type FakeAccount = { sub: string; email: string; name: string };

export type TokenRequestRecord = { status: number; error?: string };

type Grant = {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  nonce: string | null;
  account: FakeAccount;
  used: boolean;
  expiresAt: number;
};

type Client = { clientId: string; clientSecret: string; redirectUris: string[] };

const KID = "fake-oidc-key";
const CODE_LIFETIME_MS = 10 * 60_000;

export async function startFakeOidcProvider(client: Client) {
  const signing = await generateKeyPair("RS256");
  const stranger = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(signing.publicKey)), kid: KID, alg: "RS256", use: "sig" };
  const publicPem = await exportSPKI(signing.publicKey);
  const grants = new Map<string, Grant>();
  const issued: string[] = [];
  const defaults = {
    fault: null as IdTokenFault | null,
    deny: false,
    account: { sub: "fake-lena-vogt", email: "lena.vogt@praxis.example", name: "Dr. Lena Vogt" } as FakeAccount,
    /** The ID token's `acr`; by default none, as from a provider that does not say how the user signed in. */
    acr: null as string | null,
    /** Where the token endpoint redirects its POSTs (307, body and all, were a client to follow); null: it answers. */
    tokenRedirect: null as string | null,
  };
  const settings = { ...defaults };
  const tokenRequests: TokenRequestRecord[] = [];

  function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers });
    res.end(JSON.stringify(body));
  }

  function discovery() {
    return {
      issuer: url,
      authorization_endpoint: `${url}/authorize`,
      token_endpoint: `${url}/token`,
      jwks_uri: `${url}/jwks`,
      end_session_endpoint: `${url}/logout`,
      response_types_supported: ["code"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
      scopes_supported: ["openid", "profile", "email"],
    };
  }

  function authorize(query: URLSearchParams, res: http.ServerResponse) {
    const redirectUri = query.get("redirect_uri") ?? "";
    // §3.1.2.6: never send the browser to an unknown client or unregistered redirect_uri.
    if (query.get("client_id") !== client.clientId || !client.redirectUris.includes(redirectUri)) {
      res.writeHead(400, { "Content-Type": "text/plain" });
      res.end("invalid client or redirect_uri");
      return;
    }
    const back = new URL(redirectUri);
    const state = query.get("state");
    if (state) back.searchParams.set("state", state);
    const scopes = (query.get("scope") ?? "").split(" ");
    const challenge = query.get("code_challenge");
    if (query.get("response_type") !== "code" || !scopes.includes("openid")) {
      back.searchParams.set("error", "invalid_request");
    } else if (!challenge || query.get("code_challenge_method") !== "S256") {
      back.searchParams.set("error", "invalid_request");
      back.searchParams.set("error_description", "PKCE with S256 is required");
    } else if (settings.deny) {
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_description", "The user declined the sign-in");
    } else {
      const code = randomBytes(24).toString("base64url");
      grants.set(code, {
        clientId: client.clientId,
        redirectUri,
        codeChallenge: challenge,
        nonce: query.get("nonce"),
        account: settings.account,
        used: false,
        expiresAt: Date.now() + CODE_LIFETIME_MS,
      });
      back.searchParams.set("code", code);
    }
    res.writeHead(302, { Location: back.toString() });
    res.end();
  }

  function clientAuthenticated(req: http.IncomingMessage, form: URLSearchParams) {
    let id = form.get("client_id");
    let secret = form.get("client_secret");
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (basic) {
      const [user = "", pass = ""] = Buffer.from(basic, "base64").toString().split(":");
      id = decodeURIComponent(user);
      secret = decodeURIComponent(pass);
    }
    const expected = Buffer.from(client.clientSecret);
    const given = Buffer.from(secret ?? "");
    return id === client.clientId && given.length === expected.length && timingSafeEqual(given, expected);
  }

  async function token(req: http.IncomingMessage, form: URLSearchParams, res: http.ServerResponse) {
    const fail = (status: number, error: string) => {
      tokenRequests.push({ status, error });
      json(res, status, { error }, status === 401 ? { "WWW-Authenticate": "Basic" } : {});
    };
    if (!clientAuthenticated(req, form)) return fail(401, "invalid_client");
    if (form.get("grant_type") !== "authorization_code") return fail(400, "unsupported_grant_type");
    const grant = grants.get(form.get("code") ?? "");
    if (!grant || grant.clientId !== client.clientId || grant.expiresAt < Date.now()) {
      return fail(400, "invalid_grant");
    }
    // A code is spent by its first presentation, whatever comes of it (RFC 6749 §4.1.2).
    const reused = grant.used;
    grant.used = true;
    if (reused) return fail(400, "invalid_grant");
    if (form.get("redirect_uri") !== grant.redirectUri) return fail(400, "invalid_grant");
    const verifier = form.get("code_verifier") ?? "";
    if (createHash("sha256").update(verifier).digest("base64url") !== grant.codeChallenge) {
      return fail(400, "invalid_grant");
    }
    const idToken = await mintIdToken(grant);
    tokenRequests.push({ status: 200 });
    json(res, 200, {
      access_token: randomBytes(32).toString("base64url"),
      token_type: "Bearer",
      expires_in: 300,
      scope: "openid profile email",
      id_token: idToken,
    });
  }

  async function mintIdToken(grant: Grant) {
    const fault = settings.fault;
    if (fault === "replay-previous") {
      const previous = issued.at(-1);
      if (!previous) throw new Error("replay-previous needs an earlier ID token");
      return previous;
    }
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      iss: fault === "wrong-issuer" ? "https://idp.attacker.example" : url,
      sub: grant.account.sub,
      aud: fault === "wrong-audience" ? "another-client" : grant.clientId,
      iat: now,
      exp: now + 300,
      auth_time: now,
      email: grant.account.email,
      email_verified: true,
      name: grant.account.name,
    };
    if (grant.nonce !== null) claims.nonce = grant.nonce;
    if (settings.acr !== null) claims.acr = settings.acr;
    if (fault === "wrong-nonce") claims.nonce = randomBytes(32).toString("base64url");
    if (fault === "no-nonce") delete claims.nonce;
    if (fault === "no-sub") delete claims.sub;
    if (fault === "expired") Object.assign(claims, { iat: now - 3600, exp: now - 600 }); // far past the 60 s leeway
    if (fault === "issued-in-future") Object.assign(claims, { iat: now + 3600, exp: now + 3900 });
    let idToken: string;
    if (fault === "alg-none") {
      idToken = new UnsecuredJWT(claims).encode();
    } else if (fault === "hs256-with-public-key") {
      // The classic confusion: the published RSA key used as an HMAC secret.
      const secret = new TextEncoder().encode(publicPem);
      idToken = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: KID }).sign(secret);
    } else {
      const key = fault === "other-key" ? stranger.privateKey : signing.privateKey;
      idToken = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: KID, typ: "JWT" }).sign(key);
    }
    issued.push(idToken);
    return idToken;
  }

  const server = http.createServer((req, res) => {
    const target = new URL(req.url ?? "/", url);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const route = `${req.method} ${target.pathname}`;
      if (route === "GET /.well-known/openid-configuration") return json(res, 200, discovery());
      if (route === "GET /jwks") return json(res, 200, { keys: [jwk] });
      if (route === "GET /authorize") return authorize(target.searchParams, res);
      if (route === "POST /token" && settings.tokenRedirect) {
        res.writeHead(307, { Location: settings.tokenRedirect }).end();
        return;
      }
      if (route === "POST /token") {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        return void token(req, form, res).catch((error: Error) => json(res, 500, { error: error.message }));
      }
      json(res, 404, { error: "not_found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer: url,
    /** Change per test: what the ID token says, whether the user denies, who signs in, how (acr). */
    settings,
    /** The token endpoint's answers, oldest first. */
    tokenRequests,
    /** ID tokens handed out, oldest first. */
    issued,
    reset() {
      Object.assign(settings, defaults);
      tokenRequests.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type FakeOidcProvider = Awaited<ReturnType<typeof startFakeOidcProvider>>;
