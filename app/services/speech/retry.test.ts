import { Response } from "undici";
import { describe, expect, it } from "vitest";

import { LlmError } from "../llm/types";
import { httpErrorFactory, redactApiKey, retryAfterOf } from "./retry";
import { SpeechEngineError } from "./types";

// What a vendor's error says reaches the clinician's message and the log: never with the API key in it.
describe("redactApiKey", () => {
  it("cuts every copy of the key out and shortens long messages", () => {
    const key = "sk-test-1234567890";
    expect(redactApiKey(`Incorrect API key provided: ${key}. Key ${key} is invalid`, key)).toBe(
      "Incorrect API key provided: ***. Key *** is invalid",
    );
    expect(redactApiKey("x".repeat(400), key)).toBe(`${"x".repeat(300)}…`);
  });

  it("leaves a message alone without a key, or with one too short to cut safely", () => {
    expect(redactApiKey("Service unavailable", undefined)).toBe("Service unavailable");
    expect(redactApiKey("a b c", "a")).toBe("a b c");
  });
});

// The wording both OpenAI-compatible clients share, on answers their own tests do not send.
describe("httpErrorFactory", () => {
  const wording = {
    host: "llm.example",
    apiKey: "sk-test-1234567890",
    settings: { apiKey: "X_API_KEY", url: "X_URL", notFound: "X_URL and X_MODEL" },
    notConfiguredKey: "letters:errors.engineNotConfigured",
    // Claims a refused key and a used-up quota too: the shared reading of those must come first.
    special: (status: number, _detail: string, said: string) =>
      [401, 413, 429].includes(status) ? `${status} read its own way${said}` : undefined,
  };
  const answer = (status: number, headers: Record<string, string> = {}) => new Response(null, { status, headers });

  it("names the setting to check, cuts the key out, and asks the client only after a refused key and a quota", () => {
    const httpError = httpErrorFactory(SpeechEngineError, wording);
    const notFound = httpError(answer(404), '{"error":{"message":"no model for sk-test-1234567890"}}');
    expect(notFound).toMatchObject({ kind: "permanent", options: { status: 404 } });
    expect(notFound.message).toBe("llm.example answered 404: no model for ***. Check X_URL and X_MODEL.");
    expect(httpError(answer(308), "").message).toBe(
      "llm.example redirected the request (308); set X_URL to the final address.",
    );
    expect(httpError(answer(413), "Payload Too Large").message).toBe("413 read its own way: Payload Too Large");
    expect(httpError(answer(500), "").message).toBe("llm.example answered 500");

    expect(httpError(answer(401), "nope")).toMatchObject({
      message: "llm.example refused the API key (401): nope. Check X_API_KEY.",
      options: { status: 401, userMessageKey: "letters:errors.engineNotConfigured" },
    });
    const keyless = httpErrorFactory(SpeechEngineError, { ...wording, apiKey: undefined });
    expect(keyless(answer(403), "").message).toBe("llm.example requires an API key (403). Set X_API_KEY.");
    expect(httpError(answer(429), '{"error":{"type":"insufficient_quota","message":"no credit"}}')).toMatchObject({
      kind: "permanent",
      message: "llm.example: the account's quota is used up (429): no credit",
      options: { status: 429, userMessageKey: "letters:errors.engineNotConfigured" },
    });
  });

  it("hands the server's wait to either error class where retryAfterOf finds it", () => {
    const rateLimited = answer(429, { "retry-after-ms": "150" });
    const llm = httpErrorFactory(LlmError, wording)(rateLimited, "slow down");
    expect(llm).toBeInstanceOf(LlmError);
    expect(llm).toMatchObject({ kind: "transient", options: { status: 429, retryAfterMs: 150 } });
    expect(retryAfterOf(llm)).toBe(150);

    const speech = httpErrorFactory(SpeechEngineError, wording)(rateLimited, "slow down");
    expect(speech).toBeInstanceOf(SpeechEngineError);
    expect(speech.options).toEqual({ status: 429 });
    expect(retryAfterOf(speech)).toBe(150);

    // No wait on an answer that is not worth another try.
    expect(retryAfterOf(httpErrorFactory(LlmError, wording)(answer(400, { "retry-after-ms": "150" }), ""))).toBe(
      undefined,
    );
  });
});
