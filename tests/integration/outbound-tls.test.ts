import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

import { installGlobals } from "@remix-run/node";
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";

import { loader as usageLoader } from "~/routes/api.usage-dashboard";
import { loader as callbackLoader } from "~/routes/auth.callback";
import { loader as startLoader } from "~/routes/auth.start";
import { getDiscovery, resetOidcCaches } from "~/services/web/auth.server";
import { getConfig, setConfig } from "~/services/config/config.server";
import { openDatabase } from "~/models/db.server";
import { LiveEngineError } from "~/services/live/engine-types";
import { createSpeechmaticsRealtimeEngine } from "~/services/live/engines/speechmatics-rt.server";
import { createRealtimeToken } from "~/services/live/speechmatics-token.server";
import { createOpenAiChatModel } from "~/services/llm/openai-chat.server";
import { LlmError } from "~/services/llm/types";
import { PatientRecordError, createPatientRecordSource } from "~/services/patient-records/patient-records.server";
import { createOpenAiTranscriptionEngine } from "~/services/speech/openai-transcribe.server";
import type { RetryPolicy } from "~/services/speech/retry";
import { createSpeechmaticsEngine } from "~/services/speech/speechmatics.server";
import { SpeechEngineError, type SpeechRequest } from "~/services/speech/types";
import { makeStorageKey } from "~/services/storage/keys.server";
import { createS3Storage } from "~/services/storage/s3.server";
import { isServiceUnavailable } from "~/services/web/unavailable.server";
import { makeTempDir, removeTempDir } from "../support/audio-fixtures";
import {
  certificateErrorCode,
  startUntrustedHttpsServer,
  startUntrustedPostgresServer,
  type UntrustedHttpsServer,
} from "../support/untrusted-https";
import { noiseWav } from "../support/wav";
import { callRoute, request, setupTestApp } from "../setup/app";

// ASVS 12.3.2: every outbound TLS client of the app refuses a server whose certificate it cannot trust. Each
// client is configured the way the product configures it, pointed at https://127.0.0.1:<port> (or wss://) of a
// server with a self-signed certificate (tests/support/untrusted-https.ts), and called. It must fail the way it
// fails for a service it cannot reach — the engine's "Cannot reach" error, the record system's `unavailable`, a
// failed health check or sign-in: what the clinician or operator then sees — with the certificate check as the
// cause, and the server must not have received a request: no API key, audio, patient id, token or password went
// out. tests/support/untrusted-https.test.ts shows the same servers are reached when a client trusts them.

const app = setupTestApp();

const FAST: RetryPolicy = { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 };
const SELF_SIGNED = "DEPTH_ZERO_SELF_SIGNED_CERT";

let server: UntrustedHttpsServer;
let host: string;

beforeEach(async () => {
  server = await startUntrustedHttpsServer();
  host = `127.0.0.1:${server.port}`;
});
afterEach(async () => {
  await server.close();
  // Nothing here may switch validation off for the rest of the run.
  expect(process.env.NODE_TLS_REJECT_UNAUTHORIZED).not.toBe("0");
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable("the call should have failed"),
    (error: unknown) => error,
  );
}

/** The client got as far as the handshake, broke it off, and sent nothing. */
async function expectRefusedBeforeAnyRequest() {
  await expect.poll(() => server.refusedHandshakes).toBeGreaterThan(0);
  expect(server.requests).toEqual([]);
}

/** A batch speech engine's transcription and health check both fail as for a server that is down. */
async function expectSpeechEngineUnreachable(
  engine: { transcribe(request: SpeechRequest): Promise<unknown>; check(timeoutMs: number): Promise<unknown> },
  speech: SpeechRequest,
) {
  const error = await failure(engine.transcribe(speech));
  expect(error).toBeInstanceOf(SpeechEngineError);
  expect(error).toMatchObject({ kind: "transient", message: `Cannot reach ${host}` });
  expect(certificateErrorCode(error)).toBe(SELF_SIGNED);
  expect(await engine.check(2_000)).toEqual({ status: "error", detail: `Cannot reach ${host}` });
  await expectRefusedBeforeAnyRequest();
}

describe("the engines' HTTPS and WSS clients", () => {
  let dir: string;
  let speech: SpeechRequest;

  beforeAll(async () => {
    dir = await makeTempDir();
    const file = path.join(dir, "speech.wav");
    await writeFile(file, noiseWav(2));
    speech = { file, language: "de", durationSeconds: 2, vocabulary: [] };
  });
  afterAll(async () => {
    await removeTempDir(dir);
  });

  it("the OpenAI-compatible chat model refuses an untrusted server as unreachable", async () => {
    const model = createOpenAiChatModel({
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-test-0123456789abcdef",
      model: "gpt-4o-mini",
      structuredOutput: "json_schema",
      contextTokens: 8192,
      timeoutMs: 5_000,
      retry: FAST,
    });
    const messages = [{ role: "user" as const, content: "Transkript: Der Patient hat Kopfschmerzen." }];
    for (const call of [
      () => model.generateStructured({ messages, schema: { type: "object" }, schemaName: "brief", maxTokens: 50 }),
      () => model.chatStream!({ messages, maxTokens: 50 }, () => {}),
    ]) {
      const error = await failure(call());
      expect(error).toBeInstanceOf(LlmError);
      expect(error).toMatchObject({ kind: "transient", message: `Cannot reach ${host}` });
      expect(certificateErrorCode(error)).toBe(SELF_SIGNED);
    }
    expect(await model.check(2_000)).toEqual({ status: "error", detail: `Cannot reach ${host}` });
    await expectRefusedBeforeAnyRequest();
  });

  it("the OpenAI-compatible transcriber refuses an untrusted server as unreachable", async () => {
    const engine = createOpenAiTranscriptionEngine({
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-test-0123456789abcdef",
      model: "whisper-1",
      requestTimeoutMs: 5_000,
      retry: FAST,
    });
    await expectSpeechEngineUnreachable(engine, speech);
  });

  it("the Speechmatics batch engine refuses an untrusted server as unreachable", async () => {
    const engine = createSpeechmaticsEngine({
      apiKey: "speechmatics-test-key",
      batchUrl: `${server.url}/v2`,
      requestTimeoutMs: 5_000,
      uploadTimeoutMs: 5_000,
      retry: FAST,
    });
    await expectSpeechEngineUnreachable(engine, speech);
  });

  it("the Speechmatics temporary-key request refuses an untrusted server as engine_unavailable", async () => {
    const error = await failure(
      createRealtimeToken({ apiKey: "speechmatics-test-key", managementUrl: `${server.url}/v1`, retry: FAST }),
    );
    expect(error).toBeInstanceOf(LiveEngineError);
    expect(error).toMatchObject({
      type: "engine_unavailable",
      message: `Cannot reach ${host}`,
      options: { transient: true },
    });
    expect(certificateErrorCode(error)).toBe(SELF_SIGNED);
    await expectRefusedBeforeAnyRequest();
  });

  it("the Speechmatics realtime engine refuses an untrusted wss server as engine_unavailable", async () => {
    const engine = createSpeechmaticsRealtimeEngine({
      apiKey: "speechmatics-test-key",
      realtimeUrl: `${server.wsUrl}/v2`,
      connectTimeoutMs: 5_000,
    });
    const error = await failure(engine.start({ kind: "recording", language: "de", vocabulary: [], emit: () => {} }));
    expect(error).toBeInstanceOf(LiveEngineError);
    expect(error).toMatchObject({
      type: "engine_unavailable",
      message: `Cannot reach ${host}`,
      options: { transient: true },
    });
    expect(certificateErrorCode(error)).toBe(SELF_SIGNED);
    expect(await engine.check(2_000)).toEqual({ status: "error", detail: `Cannot reach ${host}` });
    await expectRefusedBeforeAnyRequest();
  });
});

/**
 * The global fetch of production: server/index.mjs calls installGlobals with v3_singleFetch off, which puts Remix's
 * polyfill (@remix-run/web-fetch, on node:https) where Node's own fetch (undici) is. The M-Files client and the
 * OIDC calls use the global fetch, so both are tried. The globals are put back at once.
 */
function remixPolyfillFetch(): typeof fetch {
  const names = ["fetch", "Request", "Response", "Headers", "FormData", "File"];
  const saved = names.map((name) => Object.getOwnPropertyDescriptor(globalThis, name));
  installGlobals({ nativeFetch: false });
  const polyfill = globalThis.fetch;
  names.forEach((name, i) => {
    const descriptor = saved[i];
    if (descriptor) Object.defineProperty(globalThis, name, descriptor);
    else Reflect.deleteProperty(globalThis, name);
  });
  return polyfill;
}

const GLOBAL_FETCHES: [string, typeof fetch][] = [
  ["Node's fetch", globalThis.fetch],
  ["Remix's fetch polyfill (production)", remixPolyfillFetch()],
];

describe.each(GLOBAL_FETCHES)("the clients on the global fetch, with %s", (_name, globalFetch) => {
  beforeEach(() => {
    vi.stubGlobal("fetch", globalFetch);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("the M-Files client refuses an untrusted server as unavailable", async () => {
    const source = createPatientRecordSource({
      kind: "mfiles",
      baseUrl: `${server.url}/m-files`,
      vaultGuid: "{C840BE1A-5B47-4AC0-8EF7-835C166C8E24}",
      username: "svc-skribent",
      password: "correct horse battery staple",
      patientIdPropertyId: 1150,
      timeoutMs: 5_000,
    });
    const error = await failure(source.fetchDocuments("P-1"));
    expect(error).toBeInstanceOf(PatientRecordError);
    expect(error).toMatchObject({ code: "unavailable", message: "Patient record system unreachable" });
    expect(certificateErrorCode(error)).toBe(SELF_SIGNED);
    expect(await source.check()).toEqual({ status: "error", detail: "Patient record system unreachable" });
    await expectRefusedBeforeAnyRequest();
  });

  describe("OpenID Connect", () => {
    let discovery: Server;
    let discoveryUrl: string;

    // The provider's discovery document over plain http (a test stand-in) names endpoints on the untrusted server,
    // so the token request and the key set fetch each meet it on their own.
    beforeEach(async () => {
      discovery = createServer((_req, res) => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            issuer: discoveryUrl,
            authorization_endpoint: `${server.url}/authorize`,
            token_endpoint: `${server.url}/token`,
            jwks_uri: `${server.url}/jwks`,
          }),
        );
      });
      await new Promise<void>((resolve) => discovery.listen(0, "127.0.0.1", resolve));
      discoveryUrl = `http://127.0.0.1:${(discovery.address() as AddressInfo).port}`;
    });
    afterEach(async () => {
      setConfig(app.config);
      resetOidcCaches();
      await new Promise<void>((resolve) => discovery.close(() => resolve()));
    });

    function useIssuer(issuer: string) {
      setConfig({ ...app.config, oidc: { ...app.config.oidc, issuer } });
      resetOidcCaches();
    }

    it("discovery refuses an untrusted provider, as one it cannot reach", async () => {
      useIssuer(server.url);
      expect(certificateErrorCode(await failure(getDiscovery()))).toBe(SELF_SIGNED);
      // The sign-in start fails as it does while the provider is down (the error page).
      expect(certificateErrorCode(await failure(callRoute(startLoader, request("/auth/start"))))).toBe(SELF_SIGNED);
      await expectRefusedBeforeAnyRequest();
    });

    it("the token request refuses an untrusted endpoint: the sign-in fails, the code and secret stay here", async () => {
      useIssuer(discoveryUrl);
      const start = await callRoute(startLoader, request("/auth/start"));
      expect(start.status).toBe(302);
      const state = new URL(start.headers.get("Location")!).searchParams.get("state");
      const cookie = start.headers
        .getSetCookie()
        .map((c) => c.split(";")[0])
        .join("; ");
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      try {
        const callback = await callRoute(
          callbackLoader,
          request(`/auth/callback?code=one-time-code&state=${state}`, { cookie }),
        );
        expect(callback.status).toBe(302);
        expect(callback.headers.get("Location")).toBe("/login?failed=1");
        expect(warn).toHaveBeenCalledWith("[auth] sign-in failed:", expect.any(String));
      } finally {
        warn.mockRestore();
      }
      await expectRefusedBeforeAnyRequest();
    });

    it("the key set fetch refuses an untrusted endpoint: a bearer token is not accepted", async () => {
      useIssuer(discoveryUrl);
      const { privateKey } = await generateKeyPair("RS256");
      const token = await new SignJWT({ email: "ops@skribent.example", email_verified: true })
        .setProtectedHeader({ alg: "RS256", kid: "untrusted" })
        .setSubject("tls-1")
        .setIssuer(discoveryUrl)
        .setAudience(getConfig().oidc.audience)
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(privateKey);
      const response = await callRoute(
        usageLoader,
        request("/api/usage-dashboard", { headers: { Authorization: `Bearer ${token}` } }),
      );
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ detail: "Unauthorized" });
      await expectRefusedBeforeAnyRequest();
    });
  });
});

describe("object storage and the database", () => {
  it("the S3 client refuses an untrusted endpoint: the health check reports it unreachable, nothing is written", async () => {
    const storage = createS3Storage({
      kind: "s3",
      bucket: "skribent",
      region: "us-east-1",
      endpoint: server.url,
      accessKeyId: "AKIATESTTESTTESTTEST",
      secretAccessKey: "very-secret-access-key",
    });
    expect(await storage.check(2_000)).toEqual({
      status: "error",
      detail: `Cannot reach storage endpoint (${SELF_SIGNED})`,
    });
    const key = makeStorageKey({ ownerId: "tls-owner", area: "transcripts", extension: ".json" });
    const error = await failure(storage.put({ key, body: Buffer.from("{}"), contentType: "application/json" }));
    expect(certificateErrorCode(error)).toBe(SELF_SIGNED);
    // A page or API call that needed the store answers "temporarily unavailable" (503), as for a store that is down.
    expect(isServiceUnavailable(error)).toBe(true);
    await expectRefusedBeforeAnyRequest();
  });

  it.each(["verify-full", "require"])(
    "the PostgreSQL pool with sslmode=%s refuses an untrusted server before the startup message",
    async (sslmode) => {
      // pg 8 warns once that it reads require as verify-full (pg 9 will not); the warning is not the point here.
      const warning = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
      const postgres = await startUntrustedPostgresServer();
      const handle = await openDatabase({
        kind: "postgres",
        url: `postgres://postgres:secret@127.0.0.1:${postgres.port}/postgres?sslmode=${sslmode}`,
      });
      try {
        expect(certificateErrorCode(await failure(handle.pool.query("select 1")))).toBe(SELF_SIGNED);
        await expect.poll(() => postgres.refusedHandshakes).toBeGreaterThan(0);
        expect(postgres.requests).toEqual([]);
      } finally {
        warning.mockRestore();
        await handle.close();
        await postgres.close();
      }
    },
  );
});
