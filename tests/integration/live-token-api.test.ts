import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { action as jwtAction } from "~/routes/api.speechmatics-jwt";
import { getConfig, setConfig } from "~/services/config/config.server";
import { apiClientFor } from "../support/api-client";
import { startFakeSpeechmaticsRt, type FakeSpeechmaticsRt } from "../support/fake-speechmatics-rt";
import { callRoute, setupTestApp } from "../setup/app";

// SPEC §7 POST /api/{speech_provider}-jwt (issue 7): a contract test with a bearer token, against the tests'
// protocol-faithful Speechmatics server, whose management API issues the temporary key and whose realtime
// endpoint then accepts it — and only it.
const app = setupTestApp({ provider: true });
let fake: FakeSpeechmaticsRt;

function withSpeechmatics(apiKey: string | undefined) {
  const config = getConfig();
  setConfig({
    ...config,
    speech: {
      ...config.speech,
      speechmatics: { ...config.speech.speechmatics, apiKey, managementUrl: fake.managementUrl, realtimeUrl: fake.url },
    },
  });
}

beforeAll(async () => {
  fake = await startFakeSpeechmaticsRt();
});
afterAll(() => fake.close());

const opens = (url: string) =>
  new Promise<number>((resolve) => {
    const socket = new WebSocket(url);
    socket.on("open", () => {
      socket.close(1000);
      resolve(101);
    });
    socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    socket.on("error", () => resolve(0));
  });

describe("POST /api/speechmatics-jwt", () => {
  it("answers exactly { jwt }, a temporary key the provider accepts, never cached", async () => {
    withSpeechmatics(fake.apiKey);
    const api = await apiClientFor(app.issuer, "anna-berger");
    const response = await callRoute(jwtAction, api("/api/speechmatics-jwt", { method: "POST" }));
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const body = await response.json();
    expect(Object.keys(body)).toEqual(["jwt"]);
    expect(fake.tokenRequests.at(-1)).toMatchObject({ type: "rt", ttl: 60, status: 201 });
    expect(await opens(`${fake.url}?jwt=${encodeURIComponent(body.jwt)}`)).toBe(101);
    expect(await opens(`${fake.url}?jwt=not-a-key`)).toBe(401);
    // The long-lived key never reaches the browser.
    expect(JSON.stringify(body)).not.toContain(fake.apiKey);
  });

  it("says plainly when live recognition is not configured, and when the provider refuses the key", async () => {
    const api = await apiClientFor(app.issuer, "anna-berger");
    withSpeechmatics(undefined);
    const missing = await callRoute(jwtAction, api("/api/speechmatics-jwt", { method: "POST" }));
    expect(missing.status).toBe(503);
    expect(await missing.json()).toEqual({ detail: "Live speech recognition is not configured" });
    withSpeechmatics("wrong-key");
    const refused = await callRoute(jwtAction, api("/api/speechmatics-jwt", { method: "POST" }));
    expect(refused.status).toBe(502);
    expect(await refused.json()).toEqual({ detail: "Failed to authenticate with transcription service" });
  });

  it("needs a signed-in caller", async () => {
    const { request } = await import("../setup/app");
    const response = await callRoute(jwtAction, request("/api/speechmatics-jwt", { method: "POST" }));
    expect(response.status).toBe(401);
  });
});
