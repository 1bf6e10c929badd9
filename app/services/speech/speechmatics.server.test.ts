import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

import {
  TWO_SPEAKER_FIXTURE,
  buildJsonV2,
  startFakeSpeechmatics,
  type FakeSpeechmatics,
} from "../../../tests/support/fake-speechmatics";

import { noiseWav } from "../../../tests/support/wav";
import type { RetryPolicy } from "./retry";
import { createSpeechmaticsEngine, type SpeechmaticsConfig } from "./speechmatics.server";
import { SpeechEngineError, type SpeechRequest } from "./types";

// The Speechmatics batch adapter over HTTP against tests/support/fake-speechmatics.ts, and the fake itself
// checked against the published protocol (PROTOCOLS.md §1).

const KEY = "test-key";
const RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
const SECONDS = 20;

async function failure(promise: Promise<unknown>): Promise<SpeechEngineError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SpeechEngineError);
  return error as SpeechEngineError;
}

describe("Speechmatics batch engine", () => {
  let dir: string;
  let audio: Buffer;
  let file: string;
  let server: FakeSpeechmatics;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skribent-speechmatics-"));
    audio = noiseWav(SECONDS);
    file = path.join(dir, "speech.wav");
    await writeFile(file, audio);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    server = await startFakeSpeechmatics({ apiKeys: [KEY] });
  });
  afterEach(async () => {
    await server.close();
  });

  function engine(overrides: Partial<SpeechmaticsConfig> = {}) {
    return createSpeechmaticsEngine({
      apiKey: KEY,
      batchUrl: server.url,
      pollIntervalMs: 5,
      requestTimeoutMs: 2_000,
      retry: RETRY,
      ...overrides,
    });
  }

  function request(overrides: Partial<SpeechRequest> = {}): SpeechRequest {
    return { file, language: "de", durationSeconds: SECONDS, vocabulary: [], ...overrides };
  }

  describe("transcribe()", () => {
    it("uploads the WAV with the job config, polls, maps json-v2 and deletes the job", async () => {
      server.pollsUntilDone = 2;
      const result = await engine().transcribe(
        request({
          vocabulary: [
            { content: "Ibuprofen", sounds_like: ["ibu profen", " "] },
            { content: "  " },
            { content: "Migräne" },
          ],
        }),
      );

      expect(server.jobs).toHaveLength(1);
      const [job] = server.jobs;
      expect(job.config).toEqual({
        type: "transcription",
        transcription_config: {
          language: "de",
          operating_point: "enhanced",
          diarization: "speaker",
          additional_vocab: [{ content: "Ibuprofen", sounds_like: ["ibu profen"] }, { content: "Migräne" }],
        },
      });
      expect(job.dataFile).toMatchObject({ filename: "audio.wav", size: audio.length });
      expect(job.dataFile?.head).toEqual(audio.subarray(0, 64));
      expect(job.dataFile?.sha256).toBe(createHash("sha256").update(audio).digest("hex"));

      expect(server.requests.map((r) => r.route)).toEqual([
        "create",
        "status",
        "status",
        "status",
        "transcript",
        "delete",
      ]);
      expect(server.requests.every((r) => r.authorized)).toBe(true);
      expect(server.requests.filter((r) => r.route === "status").map((r) => r.query)).toEqual([
        "wait=0",
        "wait=0",
        "wait=0",
      ]);
      expect(server.requests.find((r) => r.route === "transcript")?.query).toBe("format=json-v2");
      expect(job.status).toBe("deleted");
      expect(job.deletion?.force).toBe(false);

      expect(result.engine).toBe("speechmatics");
      expect(result.language).toBe("de");
      expect(result.audioSeconds).toBe(SECONDS);
      const fixture = TWO_SPEAKER_FIXTURE.results;
      expect(result.words).toHaveLength(fixture.length);
      expect(result.words.slice(0, 4)).toEqual([
        { text: "Guten", start: fixture[0].start_time, end: fixture[0].end_time, confidence: 0.98, speaker: "S1" },
        {
          text: "Morgen",
          start: fixture[1].start_time,
          end: fixture[1].end_time,
          confidence: 0.96,
          speaker: "S1",
        },
        {
          text: ",",
          start: fixture[2].start_time,
          end: fixture[2].end_time,
          confidence: 1,
          speaker: "S1",
          punctuation: true,
          endOfSentence: false,
        },
        { text: "Frau", start: fixture[3].start_time, end: fixture[3].end_time, confidence: 0.93, speaker: "S1" },
      ]);
      expect(new Set(result.words.map((w) => w.speaker))).toEqual(new Set(["S1", "S2"]));
      expect(result.words.filter((w) => w.endOfSentence)).toHaveLength(15);
      expect(result.words.filter((w) => w.punctuation && !w.endOfSentence).map((w) => w.text)).toEqual([
        ",",
        ",",
        ",",
        ",",
      ]);
      expect(result.words.some((w) => w.text === "<script>alert(1)</script>" && !w.punctuation)).toBe(true);
      const spoken = result.words.filter((w) => !w.punctuation);
      expect(spoken.some((w) => w.confidence < 0.5)).toBe(true);
      expect(spoken.some((w) => w.confidence >= 0.5 && w.confidence <= 0.85)).toBe(true);
      expect(spoken.some((w) => w.confidence > 0.85)).toBe(true);
    });

    it("omits an empty vocabulary and sends at most 1000 entries", async () => {
      await engine().transcribe(request());
      const many = Array.from({ length: 1_200 }, (_, i) => ({ content: i % 2 ? `Wort${i}` : "" }));
      await engine().transcribe(request({ vocabulary: [{ content: "" }, ...many, ...many] }));
      const configs = server.jobs.map((j) => j.config.transcription_config as Record<string, unknown>);
      expect(configs[0]).not.toHaveProperty("additional_vocab");
      const sent = configs[1].additional_vocab as Array<{ content: string }>;
      expect(sent).toHaveLength(1_000);
      expect(sent.every((entry) => entry.content.length > 0)).toBe(true);
    });

    it("maps UU to no speaker, glues opening marks, keeps free marks and skips entities and unknown types", async () => {
      const base = buildJsonV2([{ speaker: "UU", text: "Er sagte „Hallo – tschüss.", confidence: 0.9 }]);
      server.transcript = {
        ...base,
        results: [
          ...base.results,
          {
            type: "entity",
            start_time: 9,
            end_time: 9.5,
            entity_class: "date",
            alternatives: [{ content: "heute", confidence: 1, language: "de" }],
          },
          { type: "sound_event", start_time: 10 } as unknown as (typeof base.results)[number],
        ],
      };
      const { words } = await engine().transcribe(request());
      expect(words.map((w) => [w.text, w.speaker, w.punctuation ?? false, w.endOfSentence ?? false])).toEqual([
        ["Er", null, false, false],
        ["sagte", null, false, false],
        ["„Hallo", null, false, false],
        ["–", null, false, false],
        ["tschüss", null, false, false],
        [".", null, true, true],
      ]);
      const hallo = base.results.findIndex((r) => r.alternatives[0].content === "„");
      expect(words[2].start).toBe(base.results[hallo].start_time);
    });

    it("takes the language and the duration from the answer, or else from the request", async () => {
      const base = buildJsonV2([{ speaker: "S1", text: "Hello there." }], { language: "en" });
      server.transcript = base;
      const silence = path.join(dir, "not-a-wav.bin");
      await writeFile(silence, Buffer.from("not audio"));
      const result = await engine().transcribe(request({ file: silence, language: "en", durationSeconds: 7 }));
      expect(result.language).toBe("en");
      // The fake reports 0 s for a file it cannot read as WAV; the request's own figure stands in.
      expect(result.audioSeconds).toBe(7);
      expect(server.jobs[0].dataFile?.size).toBe(9);
    });

    it("fails permanently with the reason of a rejected job, and deletes it", async () => {
      server.reject = { message: "The audio file could not be decoded" };
      const error = await failure(engine().transcribe(request()));
      expect(error.kind).toBe("permanent");
      expect(error.message).toContain("The audio file could not be decoded");
      expect(server.calls("transcript")).toBe(0);
      expect(server.jobs[0].status).toBe("deleted");
      expect(server.jobs[0].deletion?.force).toBe(false);
    });

    it.each(["html", "json"] as const)("fails permanently without retrying on 401 (%s body)", async (body) => {
      server.unauthorizedBody = body;
      const error = await failure(engine({ apiKey: "wrong-key" }).transcribe(request()));
      expect(error.kind).toBe("permanent");
      expect(error.options.status).toBe(401);
      expect(error.message).toContain("API key");
      expect(error.message).not.toContain("wrong-key");
      if (body === "json") expect(error.message).toContain("Unauthorized");
      expect(server.calls()).toBe(1);
      expect(server.jobs).toHaveLength(0);
    });

    it("fails permanently on 403 (entitlement) without retrying", async () => {
      server.forbidden = true;
      const error = await failure(engine().transcribe(request()));
      expect(error.kind).toBe("permanent");
      expect(error.options.status).toBe(403);
      expect(error.message).toContain("Entitlement check failed");
      expect(server.calls()).toBe(1);
    });

    it("backs off on 429 without Retry-After and succeeds", async () => {
      server.rateLimit = { count: 2, on: "create" };
      const result = await engine().transcribe(request());
      expect(result.words.length).toBeGreaterThan(0);
      expect(server.calls("create")).toBe(3);
      expect(server.jobs).toHaveLength(1);
    });

    it("waits as long as a Retry-After says instead of its own backoff", async () => {
      server.rateLimit = { count: 1, on: "status", retryAfterSeconds: 0 };
      const started = performance.now();
      // With a 4 s base delay its own backoff would take at least 2 s.
      await engine({ retry: { attempts: 3, baseDelayMs: 4_000, maxDelayMs: 4_000 } }).transcribe(request());
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(server.calls("status")).toBe(2);
    });

    it("retries 5xx answers on every call and succeeds", async () => {
      server.failures = { status: 500, count: 2, on: "create" };
      await engine().transcribe(request());
      server.failures = { status: 503, count: 1, on: "status" };
      await engine().transcribe(request());
      server.failures = { status: 502, count: 2, on: "transcript" };
      await engine().transcribe(request());
      expect(server.calls("create")).toBe(5);
      expect(server.calls("status")).toBe(4);
      expect(server.calls("transcript")).toBe(5);
      expect(server.jobs.map((j) => j.status)).toEqual(["deleted", "deleted", "deleted"]);
    });

    it("gives up with a transient error after the bounded attempts on a persistent 503", async () => {
      server.failures = { status: 503, count: Number.POSITIVE_INFINITY };
      const error = await failure(engine().transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.options.status).toBe(503);
      expect(server.calls("create")).toBe(RETRY.attempts);
      expect(server.calls()).toBe(RETRY.attempts);
    });

    it.each(["truncated", "shape"] as const)("retries a malformed transcript (%s), then fails", async (garbage) => {
      server.garbage = garbage;
      const error = await failure(engine().transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toMatch(/unreadable JSON|unexpected answer/);
      expect(server.calls("transcript")).toBe(RETRY.attempts);
      expect(server.jobs[0].status).toBe("deleted");
    });

    it("times out a call that is never answered with a transient error, and force-deletes the job", async () => {
      server.pollsUntilDone = 1;
      server.hang = { on: "status" };
      const started = performance.now();
      const error = await failure(engine({ requestTimeoutMs: 150 }).transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("No answer");
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(server.calls("status")).toBe(RETRY.attempts);
      expect(server.jobs[0].deletion).toMatchObject({ force: true });
    });

    it("times out an upload that is never answered", async () => {
      server.hang = { on: "create" };
      const error = await failure(engine({ uploadTimeoutMs: 150 }).transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(server.calls("create")).toBe(RETRY.attempts);
    });

    it("gives up when the job does not finish within maxWaitMs, and force-deletes it", async () => {
      server.pollsUntilDone = Number.POSITIVE_INFINITY;
      const error = await failure(engine({ maxWaitMs: 100 }).transcribe(request()));
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("did not finish");
      expect(server.jobs[0]).toMatchObject({ status: "deleted", deletion: { force: true } });
    });

    it("stops polling when the signal aborts, and force-deletes the running job", async () => {
      server.pollsUntilDone = Number.POSITIVE_INFINITY;
      const controller = new AbortController();
      const polling = engine().transcribe(request({ signal: controller.signal }));
      while (server.calls("status") < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort(new Error("recording deleted"));
      await expect(polling).rejects.toThrow("recording deleted");
      expect(server.jobs[0]).toMatchObject({ status: "deleted", deletion: { force: true } });
      const polls = server.calls("status");
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(server.calls("status")).toBe(polls);
      expect(server.requests.at(-1)).toMatchObject({ route: "delete", query: "force=true", status: 200 });
    });

    it("sends nothing when the signal has already aborted", async () => {
      const controller = new AbortController();
      controller.abort(new Error("cancelled"));
      await expect(engine().transcribe(request({ signal: controller.signal }))).rejects.toThrow("cancelled");
      expect(server.calls()).toBe(0);
    });

    it("fails permanently when the audio file is missing", async () => {
      const error = await failure(engine().transcribe(request({ file: path.join(dir, "missing.wav") })));
      expect(error.kind).toBe("permanent");
      expect(server.calls()).toBe(0);
    });

    it("is not configured without an API key and sends nothing", async () => {
      const error = await failure(engine({ apiKey: undefined }).transcribe(request()));
      expect(error.kind).toBe("not_configured");
      expect(server.calls()).toBe(0);
    });

    it("refuses a redirected upload without retrying it", async () => {
      let posts = 0;
      const redirecting = createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          posts++;
          res.writeHead(307, { Location: `${server.url}/jobs` });
          res.end();
        });
      });
      await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
      try {
        const { port } = redirecting.address() as AddressInfo;
        const error = await failure(engine({ batchUrl: `http://127.0.0.1:${port}/v2` }).transcribe(request()));
        expect(error.kind).toBe("permanent");
        expect(error.message).toContain("redirect");
        expect(posts).toBe(1);
        expect(server.calls()).toBe(0);
      } finally {
        redirecting.closeAllConnections();
        await new Promise((resolve) => redirecting.close(resolve));
      }
    });

    it("keeps to the region of its base URL", async () => {
      const result = await engine({ batchUrl: `${server.regionUrl("us1")}/` }).transcribe(request());
      expect(result.words.length).toBeGreaterThan(0);
      expect(server.jobs[0].region).toBe("us1");
      expect(new Set(server.requests.map((r) => r.region))).toEqual(new Set(["us1"]));
    });
  });

  describe("check()", () => {
    it("is healthy when the key lists jobs", async () => {
      expect(await engine().check()).toEqual({ status: "healthy" });
      expect(server.requests).toEqual([expect.objectContaining({ route: "list", query: "limit=1", authorized: true })]);
    });

    it("reports a rejected key without echoing it", async () => {
      const health = await engine({ apiKey: "secret-wrong-key" }).check();
      expect(health.status).toBe("error");
      expect(health.detail).toContain("401");
      expect(health.detail).not.toContain("secret-wrong-key");
    });

    it("reports a server that does not answer within its time-out", async () => {
      server.hang = {};
      const started = performance.now();
      const health = await engine().check(150);
      expect(health).toEqual({ status: "error", detail: expect.stringContaining("No answer") });
      expect(performance.now() - started).toBeLessThan(2_000);
    });

    it("says when no API key is configured", async () => {
      expect(await engine({ apiKey: "" }).check()).toEqual({
        status: "not_configured",
        detail: "Speechmatics has no API key",
      });
      expect(server.calls()).toBe(0);
    });
  });
});
