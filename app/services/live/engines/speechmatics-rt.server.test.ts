import { createHash } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import type { LiveKind } from "~/live/protocol";
import { makeTempDir, removeTempDir } from "../../../../tests/support/audio-fixtures";
import { fakeSpeechmaticsRtForEachTest, rejection } from "../../../../tests/support/speechmatics-rt-helpers";

import { framesOf, speechPcm, toneBursts } from "../../../../tests/support/fake-speechmatics-rt-audio";
import { DEFAULT_RT_SCRIPT } from "../../../../tests/support/fake-speechmatics-rt-recognition";
import { type LiveEngineMessage, type LiveEngineRun } from "../engine-types";
import { createSpeechmaticsRealtimeEngine, IN_FLIGHT_FRAMES } from "./speechmatics-rt.server";

// The relayed Speechmatics realtime engine against the protocol-faithful fake (tests/support/fake-speechmatics-rt.ts),
// fed real German speech from espeak-ng: one line of the fake's script per spoken line.

const LINES = DEFAULT_RT_SCRIPT.slice(0, 3);
const VOCABULARY = [{ content: "Ibuprofen", sounds_like: ["ibu profen"] }, { content: "Tachykardie" }];

let dir: string;
let speech: Buffer[];

beforeAll(async () => {
  dir = await makeTempDir();
  speech = framesOf(
    await speechPcm(
      dir,
      LINES.map((l) => l.text),
    ),
  );
});
afterAll(async () => {
  await removeTempDir(dir);
});

/** A run that records what the engine emits, with promises for its end and its close. */
async function open(server: { url: string }, kind: LiveKind, apiKey = "test-key") {
  const engine = createSpeechmaticsRealtimeEngine({ apiKey, realtimeUrl: server.url, connectTimeoutMs: 5_000 });
  const messages: LiveEngineMessage[] = [];
  let ended: (message: LiveEngineMessage) => void = () => {};
  let closed: (info: { code?: number; reason?: string }) => void = () => {};
  const end = new Promise<LiveEngineMessage>((resolve) => (ended = resolve));
  const close = new Promise<{ code?: number; reason?: string }>((resolve) => (closed = resolve));
  const run: LiveEngineRun = await engine.start({
    kind,
    language: "de",
    vocabulary: VOCABULARY,
    emit: (message) => {
      messages.push(message);
      if (message.message === "EndOfTranscript" || message.message === "Error") ended(message);
    },
    onClose: closed,
  });
  return { run, messages, end, close };
}

function text(messages: LiveEngineMessage[]) {
  const results = messages.flatMap((m) => (m.message === "AddTranscript" ? m.results : []));
  return results.map((r, i) => (i > 0 && r.attaches_to !== "previous" ? " " : "") + r.alternatives[0].content).join("");
}

describe("the Speechmatics realtime engine", () => {
  const world = fakeSpeechmaticsRtForEachTest();

  it("records: speakers, no partials, all finals then EndOfTranscript, every frame in order, close 1000", async () => {
    const { run, messages, end, close } = await open(world.server, "recording");
    for (const frame of speech) run.addAudio(frame);
    run.end();
    expect(await end).toEqual({ message: "EndOfTranscript" });
    expect((await close).code).toBe(1000);
    const session = world.server.sessions[0];
    expect((await session.closed).code).toBe(1000);
    expect(session.start).toEqual({
      message: "StartRecognition",
      audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16_000 },
      transcription_config: {
        language: "de",
        operating_point: "enhanced",
        max_delay: 3,
        enable_partials: false,
        diarization: "speaker",
        additional_vocab: VOCABULARY,
      },
    });
    expect(session.frames).toBe(speech.length);
    expect(session.endOfStream).toEqual({ last_seq_no: speech.length });
    expect(session.audioSha256).toBe(createHash("sha256").update(Buffer.concat(speech)).digest("hex"));
    expect(messages.some((m) => m.message === "AddPartialTranscript" || m.message === "Info")).toBe(false);
    expect(messages.at(-1)).toEqual({ message: "EndOfTranscript" });
    expect(text(messages)).toBe(LINES.map((l) => l.text).join(" "));
    const speakers = new Set(
      messages.flatMap((m) => (m.message === "AddTranscript" ? m.results.map((r) => r.alternatives[0].speaker) : [])),
    );
    expect(speakers).toEqual(new Set(["S1", "S2"]));
  });

  it("dictates: partials without diarization, a short max_delay", async () => {
    const { run, messages, end } = await open(world.server, "dictation");
    for (const frame of speech) run.addAudio(frame);
    run.end();
    await end;
    expect(world.server.sessions[0].start).toMatchObject({
      transcription_config: { max_delay: 1, enable_partials: true, diarization: "none" },
    });
    const partials = messages.filter((m) => m.message === "AddPartialTranscript");
    expect(partials.length).toBeGreaterThan(3);
    expect(text(messages)).toBe(LINES.map((l) => l.text).join(" "));
    // Partials show the words before their Final does.
    const firstPartial = messages.findIndex((m) => m.message === "AddPartialTranscript" && m.results.length > 0);
    expect(firstPartial).toBeLessThan(messages.findIndex((m) => m.message === "AddTranscript"));
  });

  it("rejects a bad key at the handshake with not_authorised", async () => {
    const error = await rejection(open(world.server, "recording", "wrong-key"));
    expect(error.type).toBe("not_authorised");
    expect(error.options.transient).toBeFalsy();
    expect(error.message).not.toContain("wrong-key");
    expect(world.server.handshakes).toEqual([{ status: 401, auth: "bearer" }]);
    expect(world.server.sessions).toHaveLength(0);
  });

  it("rejects a start the server refuses with its error type", async () => {
    world.server.failStartWith = { type: "quota_exceeded", reason: "Concurrent Quota Exceeded" };
    const error = await rejection(open(world.server, "recording"));
    expect(error).toMatchObject({ type: "quota_exceeded", message: "Concurrent Quota Exceeded" });
    expect(error.options.transient).toBe(true);
  });

  it("passes a Warning on and carries on to EndOfTranscript", async () => {
    world.server.warnAfterFrames = { frames: 2, type: "duration_limit_exceeded", reason: "Duration limit reached" };
    const { run, messages, end } = await open(world.server, "recording");
    for (const frame of speech) run.addAudio(frame);
    run.end();
    expect(await end).toEqual({ message: "EndOfTranscript" });
    expect(messages).toContainEqual({
      message: "Warning",
      type: "duration_limit_exceeded",
      reason: "Duration limit reached",
    });
  });

  it("passes an Error mid-stream on, then nothing more", async () => {
    world.server.errorAfterFrames = { frames: 3, type: "job_error", reason: "The worker failed" };
    const { run, messages, end, close } = await open(world.server, "recording");
    for (const frame of speech) run.addAudio(frame);
    run.end();
    expect(await end).toEqual({ message: "Error", type: "job_error", reason: "The worker failed" });
    expect(await close).toEqual({ code: 4013, reason: "job_error" });
    expect(messages.at(-1)).toEqual({ message: "Error", type: "job_error", reason: "The worker failed" });
    expect(world.server.sessions[0].frames).toBeLessThan(speech.length);
  });

  it("turns an abrupt close into an Error and calls onClose", async () => {
    world.server.closeAbruptlyAfterFrames = 3;
    const { run, messages, end, close } = await open(world.server, "dictation");
    for (const frame of speech) run.addAudio(frame);
    expect(await end).toMatchObject({ message: "Error", type: "connection_lost" });
    expect((await close).code).toBe(1006);
    run.addAudio(speech[0]);
    run.end();
    expect(messages.filter((m) => m.message === "Error")).toHaveLength(1);
  });

  it(`keeps at most ${IN_FLIGHT_FRAMES} frames in flight when acks are slow, and delivers all in order`, async () => {
    world.server.ackDelayMs = 3;
    const frames = framesOf(toneBursts([0.3, 3, 1, 4, 2]));
    const { run, end } = await open(world.server, "recording");
    for (const frame of frames) run.addAudio(frame);
    run.end();
    expect(await end).toEqual({ message: "EndOfTranscript" });
    const session = world.server.sessions[0];
    expect(session.maxInFlight).toBe(IN_FLIGHT_FRAMES);
    expect(session.frames).toBe(frames.length);
    expect(session.acks).toEqual(frames.map((_, i) => i + 1));
    expect(session.audioSha256).toBe(createHash("sha256").update(Buffer.concat(frames)).digest("hex"));
  });

  it("close() tears the connection down with 1000 and emits nothing more", async () => {
    const { run, messages, close } = await open(world.server, "dictation");
    for (const frame of speech.slice(0, 8)) run.addAudio(frame);
    run.close();
    const count = messages.length;
    expect((await world.server.sessions[0].closed).code).toBe(1000);
    await close;
    run.addAudio(speech[9]);
    run.end();
    expect(messages).toHaveLength(count);
    expect(world.server.sessions[0].endOfStream).toBeNull();
  });

  it("checks the key with a bare handshake", async () => {
    const engine = (apiKey: string | undefined) =>
      createSpeechmaticsRealtimeEngine({ apiKey, realtimeUrl: world.server.url });
    expect(await engine(undefined).check()).toMatchObject({ status: "not_configured" });
    expect(await engine("").check()).toMatchObject({ status: "not_configured" });
    expect(await engine("test-key").check()).toEqual({ status: "healthy" });
    const bad = await engine("wrong").check();
    expect(bad.status).toBe("error");
    expect(bad.detail).toContain("401");
    expect(bad.detail).not.toContain("wrong");
    expect((await world.server.sessions[0].closed).code).toBe(1000);
    expect(world.server.sessions[0].start).toBeNull();
  });
});

describe("the Speechmatics realtime engine without a server", () => {
  let silent: Server;
  let port: number;
  const held = new Set<Socket>();

  beforeAll(async () => {
    // Accepts TCP connections and never answers: a handshake that hangs.
    silent = createServer((socket) => {
      held.add(socket);
      socket.on("close", () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    port = (silent.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  const options = { kind: "recording" as const, language: "de" as const, vocabulary: [], emit: () => {} };

  it("rejects as engine_unavailable (transient) when the host times out or cannot be reached", async () => {
    const hanging = createSpeechmaticsRealtimeEngine({
      apiKey: "test-key",
      realtimeUrl: `ws://127.0.0.1:${port}/v2`,
      connectTimeoutMs: 200,
    });
    const timedOut = await rejection(hanging.start(options));
    expect(timedOut).toMatchObject({ type: "engine_unavailable", options: { transient: true } });
    expect(await hanging.check(200)).toMatchObject({ status: "error" });

    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const free = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const unreachable = createSpeechmaticsRealtimeEngine({
      apiKey: "test-key",
      realtimeUrl: `ws://127.0.0.1:${free}/v2`,
    });
    const refused = await rejection(unreachable.start(options));
    expect(refused).toMatchObject({ type: "engine_unavailable", options: { transient: true } });
    expect(await unreachable.check()).toEqual({ status: "error", detail: `Cannot reach 127.0.0.1:${free}` });
  });

  it("refuses to start without a key", async () => {
    const engine = createSpeechmaticsRealtimeEngine({ apiKey: undefined, realtimeUrl: `ws://127.0.0.1:${port}/v2` });
    expect(await rejection(engine.start(options))).toMatchObject({ type: "engine_unavailable" });
  });
});
