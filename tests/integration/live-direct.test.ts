import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import type { NoticeMessage, TranscriptMessage } from "~/live/protocol";
import { directLink, TOKEN_PATH } from "~/live/client/direct-link";
import { directSaveBody } from "~/live/client/direct-save";
import type { LiveFailure } from "~/live/client/messages";
import { LiveConnection } from "~/live/client/transport";
import { action as createAction } from "~/routes/live.sessions";
import { action as jwtAction } from "~/routes/api.speechmatics-jwt";
import { getConfig, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { startFakeSpeechmaticsRt, type FakeSpeechmaticsRt } from "../support/fake-speechmatics-rt";
import { speechBuffers } from "../support/live-client";
import { saveLive } from "../support/live-save";
import { callRoute, setupTestApp } from "../setup/app";

// Direct mode (issue 7, ADR 0013, SPEECH_LIVE_MODE=direct): POST /live/sessions answers the provider's URL and
// the server's StartRecognition instead of making a session, and the browser's own code — directLink under the
// live connection — takes a temporary key from POST /api/speechmatics-jwt and talks to the tests' protocol-
// faithful Speechmatics server itself. What it collects saves through POST /api/save-realtime-transcript.

const app = setupTestApp({ provider: true });
let fake: FakeSpeechmaticsRt;
let dir: string;
let original: ReturnType<typeof getConfig>;

beforeAll(async () => {
  fake = await startFakeSpeechmaticsRt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-live-direct-"));
  original = getConfig();
  setConfig({
    ...original,
    speech: {
      ...original.speech,
      speechmatics: {
        ...original.speech.speechmatics,
        apiKey: fake.apiKey,
        managementUrl: fake.managementUrl,
        realtimeUrl: fake.url,
      },
      live: { engine: "speechmatics", mode: "direct" },
    },
  });
});
afterAll(async () => {
  setConfig(original);
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllGlobals();
  fake.managementFailures = null;
});

async function createDirect(api: ApiClient, kind: "recording" | "dictation", language = "de") {
  const response = await callRoute(createAction, api("/live/sessions", { method: "POST", json: { kind, language } }));
  return { status: response.status, body: await response.json() };
}

/**
 * The page's fetch: its token call (a path on our origin) goes to the app's route as this user; the server's own
 * calls (to the provider's management API) go out as usual.
 */
function tokenFetchFor(api: ApiClient) {
  const realFetch = globalThis.fetch;
  vi.stubGlobal("fetch", async (url: string | URL | Request, init?: RequestInit) => {
    if (url === TOKEN_PATH) return callRoute(jwtAction, api(TOKEN_PATH, { method: init?.method ?? "POST" }));
    return realFetch(url, init);
  });
}

function connect(direct: { url: string; start: Record<string, unknown> }, kind: "recording" | "dictation") {
  const results: Array<TranscriptMessage | NoticeMessage> = [];
  const failures: LiveFailure[] = [];
  let started: (transport: string) => void = () => {};
  const ready = new Promise<string>((resolve) => (started = resolve));
  const connection = new LiveConnection({
    kind,
    language: "de",
    maxDelay: kind === "recording" ? 3 : 1,
    direct,
    links: (name, _id, handlers, target) => {
      expect(name).toBe("direct");
      return directLink(target!, handlers, WebSocket as unknown as typeof globalThis.WebSocket);
    },
    onStarted: (transport) => started(transport),
    onResult: (message) => results.push(message),
    onFailed: (failure) => failures.push(failure),
  });
  return { connection, results, failures, ready };
}

describe("direct mode", () => {
  it("makes no session on the server and hands out the server's StartRecognition", async () => {
    const api = await apiClientFor(app.issuer, "anna-berger");
    const { status, body } = await createDirect(api, "recording");
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: null, mode: "direct", max_delay: 3, partials: false });
    expect(body.direct.url).toBe(fake.url);
    expect(body.direct.start).toMatchObject({
      message: "StartRecognition",
      audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
      transcription_config: { language: "de", operating_point: "enhanced", max_delay: 3, diarization: "speaker" },
    });
    // The custom vocabulary goes with it, as on the relay.
    expect(body.direct.start.transcription_config.additional_vocab.length).toBeGreaterThan(10);
    // Nothing is kept on the server, and the long-lived key is not in the answer.
    expect(JSON.stringify(body)).not.toContain(fake.apiKey);
    const rows = await getDb().selectFrom("live_sessions").selectAll().execute();
    expect(rows).toHaveLength(0);
  });

  it("the client streams to the provider with a temporary key, and what it kept saves as a transcript", async () => {
    const api = await apiClientFor(app.issuer, "anna-berger");
    const { body } = await createDirect(api, "recording");
    tokenFetchFor(api);
    const { connection, results, failures, ready } = connect(body.direct, "recording");
    connection.open("");
    for (const buffer of await speechBuffers(dir, ["Guten Tag, was führt Sie zu mir?", "Ich habe Kopfschmerzen."])) {
      connection.push(new Int16Array(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length)));
    }
    expect(await ready).toBe("direct");
    await expect(connection.end()).resolves.toBe(true);
    expect(failures).toEqual([]);

    // The provider saw a temporary key, the server's settings, and every buffer.
    const session = fake.sessions.at(-1)!;
    expect(session.auth).toBe("jwt");
    expect(fake.tokenRequests.at(-1)).toMatchObject({ type: "rt", status: 201 });
    const finals = results.filter((m): m is TranscriptMessage => m.message === "AddTranscript");
    expect(finals.length).toBeGreaterThanOrEqual(2);

    const payload = directSaveBody(
      { finals, language: "de", startedAt: new Date(), endedAt: new Date(), seconds: 6 },
      { template_id: "entlassbrief", transcription_mode: "transcript", audio_copy: false },
    );
    const saved = await saveLive(api, payload);
    expect(saved.status).toBe(200);
    const { transcript_key } = await saved.json();
    const row = await getDb()
      .selectFrom("recordings")
      .where("transcript_key", "=", transcript_key)
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(row.created_via).toBe("realtime");
    expect(row.transcription_status).toBe("completed");
  });

  it("a refused temporary key ends the start with the spec's authentication message", async () => {
    const api = await apiClientFor(app.issuer, "anna-berger");
    const { body } = await createDirect(api, "dictation");
    fake.managementFailures = { count: 3, status: 401 };
    tokenFetchFor(api);
    const { connection, failures } = connect(body.direct, "dictation");
    connection.open("");
    await vi.waitFor(() => expect(failures).toEqual([{ key: "authFailed" }]), { timeout: 10_000 });
  });

  it("a provider that drops the socket mid-session ends the run with 'connection lost', not a fallback", async () => {
    const api = await apiClientFor(app.issuer, "anna-berger");
    const { body } = await createDirect(api, "dictation");
    tokenFetchFor(api);
    const { connection, failures, ready } = connect(body.direct, "dictation");
    connection.open("");
    await ready;
    const sessions = fake.sessions.length;
    // The provider's side goes away (a network drop): the socket closes without a close frame.
    await fake.close();
    await vi.waitFor(() => expect(failures).toEqual([{ key: "connectionLost" }]), { timeout: 10_000 });
    expect(fake.sessions.length).toBe(sessions);
    fake = await startFakeSpeechmaticsRt({ port: Number(new URL(fake.url).port) });
  });
});
