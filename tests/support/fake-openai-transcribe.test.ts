import { FormData, fetch } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GERMAN_TRANSCRIPT, startFakeOpenAiServer, type FakeOpenAiServer } from "./fake-openai-transcribe";
import { toneWav } from "./wav";

// The fake OpenAI-compatible transcription server against the published behaviours (PROTOCOLS.md §3).

describe("fake OpenAI transcription server", () => {
  let server: FakeOpenAiServer;

  beforeEach(async () => {
    server = await startFakeOpenAiServer();
  });

  afterEach(async () => {
    await server.close();
  });

  async function post(fields: Array<[string, string]>) {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(toneWav(1))], { type: "audio/wav" }), "audio.wav");
    form.append("model", "whisper-1");
    for (const [key, value] of fields) form.append(key, value);
    return fetch(`${server.url}/audio/transcriptions`, { method: "POST", body: form });
  }

  it("refuses word timestamps without verbose_json (400)", async () => {
    const response = await post([
      ["response_format", "json"],
      ["timestamp_granularities[]", "word"],
    ]);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { type: "invalid_request_error" } });
  });

  it("gives segments by default, words only when asked, and no segments for word alone", async () => {
    const plain = (await (await post([["response_format", "verbose_json"]])).json()) as Record<string, unknown>;
    expect(plain.segments).toBeDefined();
    expect(plain.words).toBeUndefined();

    const wordsOnly = (await (
      await post([
        ["response_format", "verbose_json"],
        ["timestamp_granularities[]", "word"],
      ])
    ).json()) as Record<string, unknown>;
    expect(wordsOnly.segments).toBeUndefined();
    expect(wordsOnly.words).toBeDefined();
  });

  it("answers text, srt and vtt as plain text", async () => {
    const text = await post([["response_format", "text"]]);
    expect(text.headers.get("content-type")).toContain("text/plain");
    expect(await text.text()).toBe(`${GERMAN_TRANSCRIPT.text}\n`);
    expect(await (await post([["response_format", "srt"]])).text()).toMatch(
      /^1\n00:00:00,000 --> 00:00:01,400\nGuten Tag\.\n/,
    );
    expect(await (await post([["response_format", "vtt"]])).text()).toMatch(
      /^WEBVTT\n\n00:00:00\.000 --> 00:00:01\.400\n/,
    );
  });

  it("lets speaches answer word granularities without verbose_json", async () => {
    server.dialect = "speaches";
    const response = await post([["timestamp_granularities[]", "word"]]);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ text: GERMAN_TRANSCRIPT.text });
  });
});
