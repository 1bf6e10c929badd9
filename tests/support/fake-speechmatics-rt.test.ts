import { fetch } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { startFakeSpeechmaticsRt, type FakeSpeechmaticsRt } from "./fake-speechmatics-rt";
import { framesOf, toneBursts } from "./fake-speechmatics-rt-audio";
import {
  AUTH,
  client,
  finals,
  handshake,
  joined,
  named,
  resultsOf,
  session,
  start,
  type Result,
} from "./fake-speechmatics-rt-client";
import { DEFAULT_RT_SCRIPT } from "./fake-speechmatics-rt-recognition";

// The fake Speechmatics realtime server against PROTOCOLS.md §2 ("Behaviours a faithful realtime test server
// must reproduce", items 1–8), so the engine's tests stand on a server that behaves like the real one.

const FRAME_SECONDS = 4096 / 16_000;
/** 0.5 s silence, then three tone stretches (1.5, 1.2, 2 s) with silences between. */
const THREE_STRETCHES = [0.5, 1.5, 1, 1.2, 1, 2, 1.5];
const SCRIPT_TEXT = DEFAULT_RT_SCRIPT.slice(0, 3)
  .map((l) => l.text)
  .join(" ");

describe("the fake Speechmatics realtime server follows PROTOCOLS.md §2", () => {
  let server: FakeSpeechmaticsRt;

  beforeEach(async () => {
    server = await startFakeSpeechmaticsRt();
  });
  afterEach(async () => {
    await server.close();
  });

  it("answers a bad or absent key with HTTP 401 and sends Info, then RecognitionStarted", async () => {
    expect(await handshake(server.url)).toBe(401);
    expect(await handshake(server.url, { Authorization: "Bearer wrong" })).toBe(401);
    expect(await handshake(`${server.url}?jwt=eyJnot.issued.here`)).toBe(401);
    expect(await handshake(server.url.replace("/v2", "/v1"), AUTH)).toBe(404);
    expect(server.sessions).toHaveLength(0);
    const c = client(server.url);
    await c.opened;
    c.send(start());
    const all = await c.until(named("RecognitionStarted"));
    expect(all.map((m) => m.message)).toEqual(["Info", "RecognitionStarted"]);
    expect(all[0]).toMatchObject({ type: "recognition_quality" });
    expect(all[1].id).toEqual(server.sessions[0].id);
    expect(server.handshakes.map((h) => h.status)).toEqual([401, 401, 401, 404, 101]);
  });

  it("issues temporary keys that open sessions with ?jwt= until they expire", async () => {
    const issue = (body: unknown, key = "test-key", type = "rt") =>
      fetch(`${server.managementUrl}/api_keys?type=${type}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await issue({ ttl: 60 }, "wrong")).status).toBe(401);
    expect((await issue({ ttl: 10 })).status).toBe(422);
    const batch = (await (await issue({ ttl: 60 }, "test-key", "batch")).json()) as { key_value: string };
    const answer = await issue({ ttl: 60 });
    expect(answer.status).toBe(201);
    const { key_value } = (await answer.json()) as { key_value: string };
    expect(key_value).toMatch(/^eyJ/);
    expect(await handshake(`${server.url}?jwt=${batch.key_value}`)).toBe(401);
    expect(await handshake(`${server.url}?jwt=${key_value}`)).toBe(101);
    expect(server.sessions[0].auth).toBe("jwt");
    server.expireTemporaryKeys();
    expect(await handshake(`${server.url}?jwt=${key_value}`)).toBe(401);
    expect(server.tokenRequests.map((r) => r.status)).toEqual([401, 422, 201, 201]);
  });

  it("refuses audio or EndOfStream before StartRecognition with protocol_error and close 1003", async () => {
    for (const early of [Buffer.alloc(8192), JSON.stringify({ message: "EndOfStream", last_seq_no: 0 })]) {
      const c = client(server.url);
      await c.opened;
      c.ws.send(early);
      const { code } = await c.closed;
      expect(code).toBe(1003);
      expect(c.messages.map((m) => [m.message, m.type])).toEqual([
        ["Info", "recognition_quality"],
        ["Error", "protocol_error"],
      ]);
    }
  });

  it("refuses a bad StartRecognition with the error type and close code", async () => {
    const cases: Array<[ReturnType<typeof start>, string, number]> = [
      [start({}, { encoding: "mulaw" }), "invalid_audio_type", 1003],
      [start({ max_delay: 5 }), "invalid_config", 1003],
      [start({ max_delay: 0.5 }), "invalid_config", 1003],
      [start({ language: "fr" }), "invalid_language", 1003],
      [start({ model: "turbo" }), "invalid_model", 4004],
    ];
    for (const [message, type, code] of cases) {
      const c = client(server.url);
      await c.opened;
      c.send(message);
      expect((await c.closed).code).toBe(code);
      expect(c.messages.at(-1)).toMatchObject({ message: "Error", type });
    }
  });

  it("recording: acks in order, finals per stretch with speakers, no partials, EndOfTranscript last", async () => {
    const frames = framesOf(toneBursts(THREE_STRETCHES));
    const c = client(server.url);
    await c.opened;
    c.send(start({ max_delay: 3, diarization: "speaker" }));
    await c.until(named("RecognitionStarted"));
    for (const frame of frames) c.ws.send(frame);
    await c.until((all) => all.filter((m) => m.message === "AudioAdded").length === frames.length);
    expect(c.messages.some((m) => m.message === "EndOfTranscript")).toBe(false);
    c.send({ message: "EndOfStream", last_seq_no: frames.length });
    const all = await c.until(named("EndOfTranscript"));
    expect(all.at(-1)?.message).toBe("EndOfTranscript");
    expect(all.filter((m) => m.message === "AudioAdded").map((m) => m.seq_no)).toEqual(frames.map((_, i) => i + 1));
    expect(all.some((m) => m.message === "AddPartialTranscript")).toBe(false);

    const results = resultsOf(finals(all));
    expect(joined(results)).toBe(SCRIPT_TEXT);
    const speakers = results.filter((r) => r.type === "word").map((r) => r.alternatives[0].speaker);
    expect(speakers).toEqual([...Array(8).fill("S1"), ...Array(9).fill("S2"), ...Array(5).fill("S1")]);
    for (const final of finals(all)) {
      const list = final.results as Result[];
      expect((final.metadata as { transcript: string }).transcript).toBe(joined(list));
    }
    results.slice(1).forEach((r, i) => expect(r.start_time).toBeGreaterThanOrEqual(results[i].end_time));

    // Each Final that came while audio flowed is due no later than max_delay after its last word.
    let heard = 0;
    for (const message of all) {
      if (message.message === "AudioAdded") heard = (message.seq_no as number) * FRAME_SECONDS;
      if (message.message !== "AddTranscript" || message === finals(all).at(-1)) continue;
      const end = (message.metadata as { end_time: number }).end_time;
      expect(heard - end).toBeLessThanOrEqual(3 + FRAME_SECONDS);
      expect(heard).toBeGreaterThanOrEqual(end);
    }

    c.ws.close(1000);
    expect(await server.sessions[0].closed).toEqual({ code: 1000, reason: "" });
    expect(server.sessions[0]).toMatchObject({ frames: frames.length, endOfStream: { last_seq_no: frames.length } });
  });

  it("dictation: partials, each Final followed by a Partial, UU without diarization", async () => {
    const c = await session(server.url, { max_delay: 1, enable_partials: true }, framesOf(toneBursts(THREE_STRETCHES)));
    const all = c.messages;
    expect(all.filter((m) => m.message === "AddPartialTranscript").length).toBeGreaterThan(finals(all).length);
    all.forEach((m, i) => {
      if (m.message === "AddTranscript") expect(all[i + 1].message).toBe("AddPartialTranscript");
    });
    const results = resultsOf(finals(all));
    expect(new Set(results.map((r) => r.alternatives[0].speaker))).toEqual(new Set(["UU"]));
    expect(joined(results)).toBe(SCRIPT_TEXT);
    // The first partial shows the first word while the first stretch is still being spoken.
    const first = all.find((m) => m.message === "AddPartialTranscript" && (m.results as Result[]).length > 0);
    expect((first?.results as Result[])[0].alternatives[0].content).toBe("Guten");
  });

  it("recognises the same words whatever the frame size and encoding", async () => {
    const config = { max_delay: 2, diarization: "speaker" };
    const whole = toneBursts(THREE_STRETCHES);
    const base = resultsOf(finals((await session(server.url, config, framesOf(whole))).messages));
    const odd = resultsOf(finals((await session(server.url, config, framesOf(whole, 1001))).messages));
    const float = toneBursts(THREE_STRETCHES, "pcm_f32le");
    const f32 = resultsOf(
      finals((await session(server.url, config, framesOf(float, 16384), { encoding: "pcm_f32le" })).messages),
    );
    expect(base.length).toBeGreaterThan(10);
    expect(odd).toEqual(base);
    expect(f32).toEqual(base);
  });

  it("warns about audio after EndOfStream and ignores it", async () => {
    const c = await session(server.url, {}, framesOf(toneBursts([0.2, 0.5, 0.5])));
    const acks = c.messages.filter((m) => m.message === "AudioAdded").length;
    c.ws.send(Buffer.alloc(8192));
    await c.until(named("Warning"));
    expect(c.messages.at(-1)).toMatchObject({ message: "Warning", type: "add_audio_after_eos" });
    expect(c.messages.filter((m) => m.message === "AudioAdded")).toHaveLength(acks);
    expect(server.sessions[0].framesAfterEos).toBe(1);
  });

  it("acks every frame in order when acks are delayed", async () => {
    server.ackDelayMs = 5;
    const frames = framesOf(toneBursts([0.2, 1, 0.5]));
    const c = await session(server.url, {}, frames);
    expect(c.messages.filter((m) => m.message === "AudioAdded").map((m) => m.seq_no)).toEqual(
      frames.map((_, i) => i + 1),
    );
    expect(server.sessions[0].bytes).toBe(frames.reduce((sum, f) => sum + f.length, 0));
  });
});

describe("the fake Speechmatics realtime server's failures and time-outs", () => {
  let server: FakeSpeechmaticsRt | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function started(options: Parameters<typeof startFakeSpeechmaticsRt>[0]) {
    server = await startFakeSpeechmaticsRt(options);
    const c = client(server.url);
    await c.opened;
    c.send(start());
    return c;
  }

  it("warns before the idle time-out, then ends with idle_timeout and close 1008", async () => {
    const c = await started({ idleTimeoutMs: 300, idleWarningLeadsMs: [200, 100] });
    expect((await c.closed).code).toBe(1008);
    expect(c.messages.slice(2).map((m) => `${m.message}:${m.type}`)).toEqual([
      "Warning:idle_timeout",
      "Warning:idle_timeout",
      "Error:idle_timeout",
    ]);
  });

  it("warns before the session time-out, then ends with session_timeout and close 1008", async () => {
    const c = await started({ sessionTimeoutMs: 300, sessionWarningLeadsMs: [150] });
    expect((await c.closed).code).toBe(1008);
    expect(c.messages.slice(2).map((m) => `${m.message}:${m.type}`)).toEqual([
      "Warning:session_timeout",
      "Error:session_timeout",
    ]);
  });

  it("fails a start on request with the type's close code", async () => {
    const c = await started({ failStartWith: { type: "quota_exceeded", reason: "Concurrent Quota Exceeded" } });
    expect(await c.closed).toEqual({ code: 4005, reason: "quota_exceeded" });
    expect(c.messages.map((m) => m.message)).toEqual(["Info", "Error"]);
  });

  it("sends a Warning and an Error mid-stream on request, and can drop the connection", async () => {
    const c = await started({
      warnAfterFrames: { frames: 1, type: "duration_limit_exceeded", reason: "limit" },
      errorAfterFrames: { frames: 2, type: "job_error", reason: "worker lost" },
    });
    await c.until(named("RecognitionStarted"));
    for (const frame of framesOf(toneBursts([0.2, 0.8]))) c.ws.send(frame);
    expect((await c.closed).code).toBe(4013);
    expect(c.messages.slice(2).map((m) => `${m.message}:${m.type ?? m.seq_no}`)).toEqual([
      "AudioAdded:1",
      "Warning:duration_limit_exceeded",
      "AudioAdded:2",
      "Error:job_error",
    ]);

    server!.errorAfterFrames = null;
    server!.closeAbruptlyAfterFrames = 2;
    const d = client(server!.url);
    await d.opened;
    d.send(start());
    await d.until(named("RecognitionStarted"));
    for (const frame of framesOf(toneBursts([0.2, 0.8]))) d.ws.send(frame);
    expect((await d.closed).code).toBe(1006);
    expect(d.messages.filter((m) => m.message === "AudioAdded")).toHaveLength(1);
  });
});
