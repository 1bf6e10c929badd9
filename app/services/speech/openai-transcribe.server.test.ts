import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

import {
  FAILURES,
  GERMAN_TRANSCRIPT,
  buildTranscript,
  startFakeOpenAiServer,
  type FakeOpenAiServer,
} from "../../../tests/support/fake-openai-transcribe";

import { WHISPER_PROMPT_MAX_CHARS, whisperPrompt } from "./vocabulary.server";
import { createOpenAiTranscriptionEngine, type OpenAiTranscriptionConfig } from "./openai-transcribe.server";
import { toneWav } from "../../../tests/support/wav";
import type { RetryPolicy } from "./retry";
import { SpeechEngineError, type EngineResult, type SpeechRequest, type VocabularyEntry } from "./types";

// The OpenAI-compatible transcription engine over HTTP against the fake server (PROTOCOLS.md §3): the form it
// sends, how it reads the answers of OpenAI, speaches, vLLM and Ollama, and which failures it retries.

const KEY = "sk-test-0123456789abcdef";
const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

async function rejection(promise: Promise<unknown>): Promise<SpeechEngineError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SpeechEngineError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

function texts(result: EngineResult) {
  return result.words.map((w) => w.text);
}

function word(result: EngineResult, text: string) {
  const found = result.words.find((w) => w.text === text && !w.punctuation);
  if (!found) throw new Error(`no word ${text}`);
  return found;
}

const EXPECTED_TOKENS = [
  "Guten",
  "Tag",
  ".",
  "Der",
  "Patient",
  "berichtet",
  "über",
  "Kopfschmerzen",
  "seit",
  "drei",
  "Tagen",
  ".",
  "Er",
  "schreibt",
  "<script>alert(1)</script>",
  "ins",
  "Formular",
  ",",
  "sagt",
  "er",
  "?",
  "Leichtes",
  "Fieber",
  ",",
  "38,5",
  "Grad",
  "!",
];

describe("OpenAI-compatible transcription engine", () => {
  let dir: string;
  let audioFile: string;
  let audioBytes: Buffer;
  let server: FakeOpenAiServer;

  function engine(overrides: Partial<OpenAiTranscriptionConfig> = {}) {
    return createOpenAiTranscriptionEngine({
      baseUrl: server.url,
      apiKey: KEY,
      model: "whisper-1",
      retry: FAST,
      ...overrides,
    });
  }

  function request(overrides: Partial<SpeechRequest> = {}): SpeechRequest {
    return { file: audioFile, language: "de", durationSeconds: 15, vocabulary: [], ...overrides };
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skribent-openai-"));
    audioBytes = toneWav(1);
    audioFile = path.join(dir, "normalised.wav");
    await writeFile(audioFile, audioBytes);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    server = await startFakeOpenAiServer({ apiKey: KEY });
  });

  afterEach(async () => {
    await server.close();
  });

  describe("the request", () => {
    it("posts the WAV and the fields for verbose_json with word and segment timestamps", async () => {
      const vocabulary: VocabularyEntry[] = [
        { content: "Metoprolol" },
        { content: "Ramipril", sounds_like: ["rami prill"] },
        { content: "Dr. Weißenbach" },
      ];
      await engine().transcribe(request({ vocabulary }));

      const [sent] = server.transcriptionRequests();
      expect(sent.method).toBe("POST");
      expect(sent.bearer).toBe(true);
      expect(sent.fields).toEqual({
        model: ["whisper-1"],
        language: ["de"],
        response_format: ["verbose_json"],
        "timestamp_granularities[]": ["word", "segment"],
        temperature: ["0"],
        prompt: ["Metoprolol, Ramipril, Dr. Weißenbach"],
      });
      expect(sent.file).toMatchObject({ name: "audio.wav", type: "audio/wav", size: audioBytes.length });
      expect(sent.file?.head.subarray(0, 4).toString()).toBe("RIFF");
      expect(sent.file?.sha256).toBe(createHash("sha256").update(audioBytes).digest("hex"));
    });

    it("leaves out the prompt without vocabulary and the Authorization header without a key", async () => {
      server.apiKey = null;
      await engine({ apiKey: undefined }).transcribe(request());
      const [sent] = server.transcriptionRequests();
      expect(sent.bearer).toBe(false);
      expect(sent.fields.prompt).toBeUndefined();
    });

    it("bounds the prompt to Whisper's window, keeping the first terms", async () => {
      const vocabulary = Array.from({ length: 400 }, (_, i) => ({ content: `Fachbegriff${i}` }));
      await engine().transcribe(request({ vocabulary }));
      const prompt = server.transcriptionRequests()[0].fields.prompt[0];
      expect(prompt.startsWith("Fachbegriff0, Fachbegriff1, ")).toBe(true);
      expect(prompt).not.toContain("Fachbegriff399");
      expect(prompt.length).toBeLessThanOrEqual(WHISPER_PROMPT_MAX_CHARS);
      expect(prompt).toBe(whisperPrompt(vocabulary));
    });
  });

  describe("reading the answer", () => {
    it("maps OpenAI's verbose_json: punctuation from the text, confidence from avg_logprob, speaker S1", async () => {
      const result = await engine().transcribe(request());

      expect(result.engine).toBe("openai");
      expect(result.language).toBe("de"); // "german"
      expect(result.audioSeconds).toBe(14.2);
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
      expect(result.words.every((w) => w.speaker === "S1")).toBe(true);

      const punctuation = result.words.filter((w) => w.punctuation);
      expect(punctuation.map((w) => [w.text, w.endOfSentence === true])).toEqual([
        [".", true],
        [".", true],
        [",", false],
        ["?", true],
        [",", false],
        ["!", true],
      ]);
      expect(result.words.filter((w) => !w.punctuation).every((w) => w.punctuation === undefined)).toBe(true);

      // OpenAI has no per-word probability: each word takes exp(avg_logprob) of its segment.
      expect(word(result, "Guten").confidence).toBeCloseTo(Math.exp(-0.05), 6);
      expect(word(result, "Patient").confidence).toBeCloseTo(Math.exp(-0.35), 6);
      expect(word(result, "<script>alert(1)</script>").confidence).toBeCloseTo(Math.exp(-1.2), 6);
      expect(word(result, "Grad").confidence).toBeCloseTo(Math.exp(-0.1), 6);
      const words = result.words.filter((w) => !w.punctuation);
      expect(words.some((w) => w.confidence < 0.5)).toBe(true);
      expect(words.some((w) => w.confidence >= 0.5 && w.confidence <= 0.85)).toBe(true);
      expect(words.some((w) => w.confidence > 0.85)).toBe(true);

      // Word times come from the server; a punctuation mark sits at the end of its word.
      const fixtureTag = GERMAN_TRANSCRIPT.words[1];
      expect(word(result, "Tag")).toMatchObject({ start: fixtureTag.start, end: fixtureTag.end });
      expect(result.words[2]).toMatchObject({ start: fixtureTag.end, end: fixtureTag.end });
    });

    it("uses a word's own probability and its attached punctuation (speaches)", async () => {
      server.dialect = "speaches";
      const result = await engine().transcribe(request());
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
      expect(result.language).toBe("de");
      expect(word(result, "Guten").confidence).toBe(0.99);
      expect(word(result, "<script>alert(1)</script>").confidence).toBe(0.1);
      expect(result.words.find((w) => w.text === "?")).toMatchObject({ punctuation: true, endOfSentence: true });
    });

    it("reads vLLM's duration given as a string", async () => {
      server.dialect = "vllm";
      const result = await engine().transcribe(request());
      expect(result.audioSeconds).toBe(14.2);
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
    });

    it("maps language names to codes and keeps the requested language for anything unknown", async () => {
      server.transcript = { ...GERMAN_TRANSCRIPT, language: "English" };
      expect((await engine().transcribe(request({ language: "de" }))).language).toBe("en");
      server.transcript = { ...GERMAN_TRANSCRIPT, language: "klingon" };
      expect((await engine().transcribe(request({ language: "de" }))).language).toBe("de");
    });

    it("derives words from segments when the server sends no word timestamps", async () => {
      server.transcript = { ...GERMAN_TRANSCRIPT, words: [] };
      const result = await engine().transcribe(request());
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
      // "Guten Tag." spans 0–1.4 s: two words, 0.7 s each.
      expect(word(result, "Guten")).toMatchObject({ start: 0, end: 0.7 });
      expect(word(result, "Tag")).toMatchObject({ start: 0.7, end: 1.4 });
      expect(word(result, "Tag").confidence).toBeCloseTo(Math.exp(-0.05), 6);
      expect(word(result, "ins").confidence).toBeCloseTo(Math.exp(-1.2), 6);
    });

    it("spreads Ollama's bare text over the recording with an unknown confidence", async () => {
      server.dialect = "ollama";
      server.transcript = buildTranscript({
        language: "german",
        languageCode: "de",
        duration: 4,
        segments: [{ start: 0, end: 4, text: "Guten Tag. Wie geht's?", avg_logprob: -0.1 }],
      });
      const result = await engine().transcribe(request({ durationSeconds: 8 }));
      expect(texts(result)).toEqual(["Guten", "Tag", ".", "Wie", "geht's", "?"]);
      expect(result.audioSeconds).toBe(8);
      expect(result.language).toBe("de");
      expect(result.words.map((w) => w.confidence)).toEqual([0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
      expect(result.words.filter((w) => !w.punctuation).map((w) => [w.start, w.end])).toEqual([
        [0, 2],
        [2, 4],
        [4, 6],
        [6, 8],
      ]);
      expect(result.words.every((w) => w.speaker === "S1")).toBe(true);
    });

    it("returns no words for silence", async () => {
      server.transcript = { ...GERMAN_TRANSCRIPT, text: "", segments: [], words: [] };
      const result = await engine().transcribe(request());
      expect(result.words).toEqual([]);
    });
  });

  describe("failures", () => {
    it("does not retry a refused key (401) and keeps the key out of the message", async () => {
      const error = await rejection(engine({ apiKey: "sk-wrong-secret-value" }).transcribe(request()));
      expect(error).toMatchObject({
        kind: "permanent",
        options: { status: 401, userMessageKey: "transcriptions:errors.engineNotConfigured" },
      });
      expect(error.message).toContain("refused the API key");
      expect(error.message).toContain("Incorrect API key");
      expect(error.message).not.toContain("sk-wrong-secret-value");
      expect(server.transcriptionRequests()).toHaveLength(1);
    });

    it("says that a key is needed when none is configured", async () => {
      const error = await rejection(engine({ apiKey: undefined }).transcribe(request()));
      expect(error).toMatchObject({ kind: "permanent", options: { status: 401 } });
      expect(error.message).toContain("requires an API key");
      expect(server.requests[0].bearer).toBe(false);
    });

    it("does not retry speaches' 403 {detail}", async () => {
      server.dialect = "speaches";
      const error = await rejection(engine({ apiKey: "wrong" }).transcribe(request()));
      expect(error).toMatchObject({ kind: "permanent", options: { status: 403 } });
      expect(error.message).toContain("Invalid API key");
      expect(server.transcriptionRequests()).toHaveLength(1);
    });

    it("does not retry an exhausted quota (429 insufficient_quota)", async () => {
      server.failAlways = FAILURES.quotaExceeded();
      const error = await rejection(engine().transcribe(request()));
      expect(error).toMatchObject({
        kind: "permanent",
        options: { status: 429, userMessageKey: "transcriptions:errors.engineNotConfigured" },
      });
      expect(error.message).toContain("quota");
      expect(server.transcriptionRequests()).toHaveLength(1);
    });

    it("waits as retry-after-ms says on a rate limit, not the backoff", async () => {
      server.failNext(1, FAILURES.rateLimited(30, 5));
      const slowBackoff: RetryPolicy = { attempts: 3, baseDelayMs: 20_000, maxDelayMs: 20_000 };
      const started = Date.now();
      const result = await engine({ retry: slowBackoff }).transcribe(request());
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(result.words.length).toBeGreaterThan(0);
      expect(server.transcriptionRequests().map((r) => r.status)).toEqual([429, 200]);
    });

    it("takes Retry-After in seconds when there is no retry-after-ms", async () => {
      server.failNext(1, FAILURES.rateLimited(0));
      const slowBackoff: RetryPolicy = { attempts: 3, baseDelayMs: 20_000, maxDelayMs: 20_000 };
      await engine({ retry: slowBackoff }).transcribe(request());
      expect(server.transcriptionRequests().map((r) => r.status)).toEqual([429, 200]);
    });

    it("retries 503s and succeeds", async () => {
      server.failNext(2, FAILURES.overloaded());
      const result = await engine().transcribe(request());
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
      expect(server.transcriptionRequests().map((r) => r.status)).toEqual([503, 503, 200]);
    });

    it("gives up on persistent 5xx as transient after the policy's attempts", async () => {
      server.failAlways = { status: 500, message: "boom" };
      const error = await rejection(engine().transcribe(request()));
      expect(error).toMatchObject({ kind: "transient", options: { status: 500 } });
      expect(error.message).toContain("boom");
      expect(server.transcriptionRequests()).toHaveLength(FAST.attempts);
    });

    it("honours x-should-retry both ways", async () => {
      server.failAlways = { ...FAILURES.overloaded(), headers: { "x-should-retry": "false" } };
      expect(await rejection(engine().transcribe(request()))).toMatchObject({ kind: "permanent" });
      expect(server.transcriptionRequests()).toHaveLength(1);

      server.failAlways = null;
      server.failNext(1, { status: 400, message: "try again", headers: { "x-should-retry": "true" } });
      await engine().transcribe(request());
      expect(server.transcriptionRequests().map((r) => r.status)).toEqual([503, 400, 200]);
    });

    it.each([
      { style: "vllm" as const, status: 400, message: "Invalid language", kind: "permanent" },
      { style: "fastapi" as const, status: 415, message: "Unsupported media type", kind: "permanent" },
      { style: "openai" as const, status: 422, message: "Unprocessable", kind: "permanent" },
      { style: "llamacpp" as const, status: 503, message: "Loading model", kind: "transient" },
      { style: "plain" as const, status: 502, message: "Bad Gateway", kind: "transient" },
    ])("reads a $style error body ($status → $kind)", async ({ style, status, message, kind }) => {
      server.failAlways = { status, style, message };
      const error = await rejection(engine().transcribe(request()));
      expect(error).toMatchObject({ kind, options: { status } });
      expect(error.message).toContain(message);
      expect(error.message).not.toContain("<");
      expect(server.transcriptionRequests()).toHaveLength(kind === "transient" ? FAST.attempts : 1);
    });

    it("retries after llama.cpp's 'Loading model' and then succeeds", async () => {
      server.failNext(1, FAILURES.loadingModel());
      await engine().transcribe(request());
      expect(server.transcriptionRequests().map((r) => r.status)).toEqual([503, 200]);
    });

    it("retries a 200 with malformed JSON, and ends transient when it persists", async () => {
      server.failNext(1, FAILURES.malformed());
      expect(texts(await engine().transcribe(request()))).toEqual(EXPECTED_TOKENS);
      expect(server.transcriptionRequests()).toHaveLength(2);

      server.failAlways = FAILURES.malformed();
      const error = await rejection(engine().transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("without valid JSON");
      expect(server.transcriptionRequests()).toHaveLength(2 + FAST.attempts);
    });

    it("does not retry well-formed JSON of the wrong shape", async () => {
      server.failAlways = { status: 200, style: "fastapi", message: "not a transcription" };
      const error = await rejection(engine().transcribe(request()));
      expect(error.kind).toBe("permanent");
      expect(server.transcriptionRequests()).toHaveLength(1);
    });

    it("times out a server that never answers, as transient", async () => {
      server.hang = true;
      const error = await rejection(
        engine({ requestTimeoutMs: 200, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } }).transcribe(request()),
      );
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("within 200 ms");
      expect(server.transcriptionRequests()).toHaveLength(2);
    });

    it("times out an answer that stops halfway, as transient", async () => {
      server.stallBody = true;
      const error = await rejection(
        engine({ requestTimeoutMs: 300, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } }).transcribe(request()),
      );
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("broke off or did not complete within 300 ms");
      expect(server.transcriptionRequests()).toHaveLength(2);
    });

    it("stops at once when the caller aborts", async () => {
      server.hang = true;
      const controller = new AbortController();
      const reason = new Error("job cancelled");
      setTimeout(() => controller.abort(reason), 100);
      const started = Date.now();
      await expect(engine().transcribe(request({ signal: controller.signal }))).rejects.toBe(reason);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(server.transcriptionRequests()).toHaveLength(1);

      // Also while the answer is arriving.
      server.hang = false;
      server.stallBody = true;
      const second = new AbortController();
      setTimeout(() => second.abort(reason), 100);
      await expect(engine().transcribe(request({ signal: second.signal }))).rejects.toBe(reason);
      expect(server.transcriptionRequests()).toHaveLength(2);
    });

    it("refuses a missing audio file without calling the server", async () => {
      const error = await rejection(engine().transcribe(request({ file: path.join(dir, "missing.wav") })));
      expect(error.kind).toBe("permanent");
      expect(server.requests).toHaveLength(0);
    });

    it("is not configured without a base URL", async () => {
      const bare = engine({ baseUrl: "" });
      expect((await rejection(bare.transcribe(request()))).kind).toBe("not_configured");
      expect(await bare.check()).toMatchObject({ status: "not_configured" });
    });
  });

  describe("check", () => {
    it("is healthy when /models answers, and sends the key", async () => {
      expect(await engine().check(1_000)).toEqual({ status: "healthy" });
      expect(server.requests[0]).toMatchObject({ method: "GET", path: "/v1/models", bearer: true, status: 200 });
    });

    it("is healthy when the server has no /models endpoint", async () => {
      server.modelsEndpoint = false;
      expect(await engine().check(1_000)).toMatchObject({ status: "healthy", detail: "no /models endpoint" });
    });

    it("reports a refused key without the key", async () => {
      const health = await engine({ apiKey: "sk-wrong-secret-value" }).check(1_000);
      expect(health.status).toBe("error");
      expect(health.detail).toContain("401");
      expect(health.detail).not.toContain("sk-wrong");
    });

    it("reports 5xx, time-outs and an unreachable server as errors", async () => {
      server.failAlways = FAILURES.overloaded();
      expect(await engine().check(1_000)).toMatchObject({ status: "error", detail: expect.stringContaining("503") });

      server.failAlways = null;
      server.hang = true;
      expect(await engine().check(200)).toMatchObject({ status: "error", detail: expect.stringContaining("200 ms") });

      const url = server.url;
      await server.close();
      const health = await createOpenAiTranscriptionEngine({ baseUrl: url, apiKey: KEY, model: "whisper-1" }).check(
        1_000,
      );
      expect(health).toMatchObject({ status: "error", detail: expect.stringContaining("Cannot reach") });
      expect(health.detail).not.toContain(KEY);
      server = await startFakeOpenAiServer();
    });
  });
});

// The fake's own behaviours that the engine tests above do not reach (PROTOCOLS.md §3 test-server list).
