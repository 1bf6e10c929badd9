import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LIVE_BUFFER_BYTES, type LiveResult, type ServerMessage } from "~/live/protocol";
import { liveMessagesAfter } from "~/models/live-session.server";
import { action as createAction } from "~/routes/live.sessions";
import { getDb } from "~/models/db.server";
import { stopBus } from "~/services/live/bus.server";
import { setLiveEngine } from "~/services/live/engine.server";
import { createSpeechmaticsRealtimeEngine } from "~/services/live/engines/speechmatics-rt.server";
import { abandonRun, closeAllRuns } from "~/services/live/runner.server";
import { setRunnerSettings } from "~/services/live/runner-settings.server";
import { stopTakeovers, takeOverIfLapsed } from "~/services/live/runner-takeover.server";
import { sweepLiveSessions } from "~/services/live/sessions.server";
import { settleMetering } from "~/services/admin/usage.server";
import { levelBursts } from "../support/fake-speechmatics-rt-audio";
import { startFakeSpeechmaticsRt, type FakeSpeechmaticsRt } from "../support/fake-speechmatics-rt";
import { openLiveSocket, startLiveDoor, type LiveSocket } from "../support/live-client";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// A live recording outlives the instance that runs its engine connection (ADR 0013 "Takeover"). Two instances
// are played in one process: the runner of "instance-a" dies (its lease is neither renewed nor released, it
// publishes nothing more), then the process answers as "instance-b", whose live door the client reconnects to.
// The fake engine says one word per tone burst, picked by the burst's loudness, so a run that hears a burst again
// says the same word again: the transcript must hold every word once, in place, however the runs were cut.
setupTestApp();
const WORDS = ["Anamnese", "Befund", "Diagnose", "Therapie", "Verlauf", "Labor", "Röntgen", "Sonographie"];
const LINES = [...WORDS, "Medikation", "Entlassung"].map((text, i) => ({ speaker: i % 2 ? "S2" : "S1", text }));
// Burst k (from 0) is [0.5 + 1.4k, 0.9 + 1.4k] s at amplitude 0.05(k + 1); its word is final 1 s after its end.
const PCM = levelBursts(LINES.map((_, k) => 0.05 * (k + 1)));
const BUFFERS = Array.from({ length: Math.ceil(PCM.length / LIVE_BUFFER_BYTES) }, (_, i) =>
  PCM.subarray(i * LIVE_BUFFER_BYTES, (i + 1) * LIVE_BUFFER_BYTES),
);
const SAMPLES = PCM.length / 2;
const LEASE_MS = 2_500;
let fake: FakeSpeechmaticsRt;
let door: Awaited<ReturnType<typeof startLiveDoor>>;
const sockets: LiveSocket[] = [];

beforeAll(async () => {
  fake = await startFakeSpeechmaticsRt({
    script: LINES,
    lineOf: (loudness) => LINES[Math.round(loudness * Math.SQRT2 * 20) - 1] ?? { text: "Rauschen" },
  });
  setLiveEngine(createSpeechmaticsRealtimeEngine({ apiKey: fake.apiKey, realtimeUrl: fake.url }));
  door = await startLiveDoor();
});
afterEach(async () => {
  for (const live of sockets.splice(0)) live.socket.terminate();
  await closeAllRuns();
  stopTakeovers();
  setRunnerSettings();
});
afterAll(async () => {
  await stopBus();
  setLiveEngine(undefined);
  await door.close();
  await fake.close();
});

const START = {
  message: "StartRecognition",
  audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
  transcription_config: { language: "de" },
};

function instance(name: string, change: Parameters<typeof setRunnerSettings>[0] = {}) {
  setRunnerSettings({ instance: name, leaseMs: LEASE_MS, heartbeatMs: 400, takeoverEveryMs: 0, ...change });
}

/** Polls `check` until it holds (bounded), so no test waits longer than the condition needs. */
async function until<T>(
  check: () => Promise<T> | T,
  what: string,
  timeoutMs = 15_000,
): Promise<Exclude<T, false | null | undefined | 0 | "">> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | "">;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const row = (id: string) =>
  getDb()
    .selectFrom("live_sessions")
    .select(["status", "runner_instance", "runner_lease_until", "run_started_samples", "samples"])
    .select(["recognised_samples", "recognised_seq", "metered_samples"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();

async function finalWords(id: string) {
  const finals = await liveMessagesAfter(id, 0, ["final"]);
  return finals
    .flatMap((f) => (f.message as ServerMessage & { results: LiveResult[] }).results)
    .filter((r) => r.type === "word")
    .map((r) => ({ text: r.alternatives[0].content, start: r.start_time, end: r.end_time }));
}

async function begin(email: string) {
  const { user, cookie } = await signedInUser({ email });
  const created = await callRoute(
    createAction,
    request("/live/sessions", {
      method: "POST",
      cookie,
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin" },
      body: JSON.stringify({ kind: "recording", language: "de" }),
    }),
  );
  const { id } = (await created.json()) as { id: string };
  return { user, cookie, id };
}

/** The client connects (again): StartRecognition after the last message it saw; resends from what is held. */
async function connect(id: string, cookie: string, lastN = 0) {
  const live = await openLiveSocket(`${door.url}?session=${id}`, { Cookie: cookie, Origin: APP_URL });
  sockets.push(live);
  live.socket.send(JSON.stringify({ ...START, last_n: lastN }));
  const started = await live.next((m) => m.message === "RecognitionStarted");
  return { live, held: (started as { last_seq_no: number }).last_seq_no };
}

async function send(live: LiveSocket, from: number, to: number) {
  for (let seq = from; seq <= to; seq++) live.socket.send(BUFFERS[seq - 1]);
  await live.next((m) => m.message === "AudioAdded" && m.seq_no === to);
}

const lastN = (live: LiveSocket) => Math.max(0, ...live.messages.map((m) => m.n ?? 0));

/** Every word once, in order, in its burst's place on the session's time line, none overlapping another. */
async function expectWholeTranscript(id: string) {
  const words = await finalWords(id);
  expect(words.map((w) => w.text)).toEqual(LINES.map((l) => l.text));
  words.forEach((word, k) => {
    expect(word.start, word.text).toBeGreaterThanOrEqual(0.5 + 1.4 * k - 0.05);
    expect(word.end, word.text).toBeLessThanOrEqual(0.9 + 1.4 * k + 0.05);
    if (k > 0) expect(word.start, word.text).toBeGreaterThanOrEqual(words[k - 1].end);
  });
}

async function usageOf(userId: string) {
  await settleMetering();
  const rows = await getDb()
    .selectFrom("usage_events")
    .select("units")
    .where("user_id", "=", userId)
    .where("endpoint", "=", "speechmatics-jwt")
    .orderBy("id")
    .execute();
  return rows.map((r) => Number(r.units));
}

describe("a run whose instance dies", () => {
  it("is taken over by the audio that keeps coming once the lease lapsed: nothing lost, nothing twice", async () => {
    instance("instance-a");
    const { user, cookie, id } = await begin("takeover-audio@example.org");
    const first = await connect(id, cookie);
    // 16 buffers (4.1 s): Anamnese and Befund are final; Diagnose (3.3–3.7 s) was fed but is not final yet.
    await send(first.live, 1, 16);
    await until(async () => (await finalWords(id)).length === 2, "the first two finals");
    const atCrash = await row(id);
    expect(Number(atCrash.recognised_samples)).toBe(36_800); // Befund ends at 2.3 s

    expect(abandonRun(id)).toBe(true);
    const upstreams = fake.sessions.length;
    first.live.socket.terminate();
    instance("instance-b");
    const second = await connect(id, cookie, lastN(first.live));
    expect(second.held).toBe(16);
    // The gap: audio arrives while the dead instance's lease still holds. It is stored, nobody steals the run.
    await send(second.live, 17, 30);
    expect(await row(id)).toMatchObject({ runner_instance: "instance-a", status: "running" });
    expect(fake.sessions).toHaveLength(upstreams);

    await until(async () => (await row(id)).runner_lease_until! < new Date(), "the lease to lapse");
    let next = 31;
    await until(async () => {
      if (next <= BUFFERS.length) await send(second.live, next, next++);
      return (await row(id)).runner_instance === "instance-b";
    }, "instance-b to take the run over");
    await send(second.live, next, BUFFERS.length);
    second.live.socket.send(JSON.stringify({ message: "EndOfStream", last_seq_no: BUFFERS.length }));
    await second.live.next((m) => m.message === "EndOfTranscript");

    await expectWholeTranscript(id);
    // The client on instance-b was sent the new run's words.
    const sent = second.live.messages.flatMap((m) => (m.message === "AddTranscript" ? m.results : []));
    expect(sent.map((r) => r.alternatives[0].content)).toContain("Diagnose");
    // The new run re-fed from just before the end of what was final, not from the start, nor after what was held.
    const done = await until(async () => {
      const current = await row(id);
      return current.status === "paused" && current;
    }, "the run to end");
    const started = Number(done.run_started_samples);
    expect(started).toBeLessThanOrEqual(36_800 - 8_000);
    expect(started).toBeGreaterThan(36_800 - 8_000 - 4096);
    expect(fake.sessions).toHaveLength(upstreams + 1);
    expect(fake.sessions.at(-1)!.bytes).toBe((SAMPLES - started) * 2);
    expect(done).toMatchObject({ runner_instance: null, recognised_seq: BUFFERS.length });
    expect(Number(done.metered_samples)).toBe(SAMPLES);
    // Each second metered once: the dead run never metered; the new one covers the session from its start.
    const usage = await usageOf(user.id);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toBeCloseTo(SAMPLES / 16_000, 3);
  }, 60_000);

  it("finishes a stream that ended while nobody ran it, once the lease lapsed", async () => {
    instance("instance-a");
    const { user, cookie, id } = await begin("takeover-end@example.org");
    const first = await connect(id, cookie);
    await send(first.live, 1, BUFFERS.length);
    await until(async () => (await finalWords(id)).length >= 3, "some finals");
    abandonRun(id);
    first.live.socket.terminate();
    instance("instance-b");
    const second = await connect(id, cookie, lastN(first.live));
    expect(second.held).toBe(BUFFERS.length);
    // EndOfStream to an instance that does not run the session: no audio will follow to trigger a takeover.
    second.live.socket.send(JSON.stringify({ message: "EndOfStream", last_seq_no: BUFFERS.length }));
    await second.live.next((m) => m.message === "EndOfTranscript");

    await expectWholeTranscript(id);
    const done = await until(async () => {
      const current = await row(id);
      return current.status === "paused" && current;
    }, "the run to end");
    expect(Number(done.metered_samples)).toBe(SAMPLES);
    expect((await usageOf(user.id)).reduce((a, b) => a + b, 0)).toBeCloseTo(SAMPLES / 16_000, 3);
  }, 60_000);
});

describe("a run that stops in order", () => {
  it("is resumed by the next StartRecognition from what was recognised, not from what was stored", async () => {
    instance("instance-a");
    const { user, cookie, id } = await begin("resume-graceful@example.org");
    const first = await connect(id, cookie);
    await send(first.live, 1, 16);
    await until(async () => (await finalWords(id)).length === 2, "the first two finals");
    // SIGTERM: the instance closes its runs (their pending words are lost with the engine) and lets go.
    await closeAllRuns();
    first.live.socket.terminate();
    instance("instance-b");
    const second = await connect(id, cookie, lastN(first.live));
    expect((await row(id)).runner_instance).toBe("instance-b");
    await send(second.live, 17, BUFFERS.length);
    second.live.socket.send(JSON.stringify({ message: "EndOfStream", last_seq_no: BUFFERS.length }));
    await second.live.next((m) => m.message === "EndOfTranscript");

    await expectWholeTranscript(id);
    await until(async () => (await row(id)).status === "paused", "the run to end");
    // Two runs heard 0.3–4.1 s twice; the user pays each second once.
    const usage = await usageOf(user.id);
    expect(usage).toHaveLength(2);
    expect(usage[0]).toBeCloseTo((16 * 4096) / 16_000, 3);
    expect(usage[0] + usage[1]).toBeCloseTo(SAMPLES / 16_000, 3);
  }, 60_000);
});

describe("the cost of watching a live runner", () => {
  it("tries a takeover at most once per interval, and never while the lease holds", async () => {
    instance("instance-a");
    const { cookie, id } = await begin("takeover-throttle@example.org");
    const first = await connect(id, cookie);
    await send(first.live, 1, 2);
    const session = await getDb()
      .selectFrom("live_sessions")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    abandonRun(id);
    instance("instance-b", { takeoverEveryMs: 60_000 });
    // The lease holds: the one try is refused, the next ones are not even made.
    expect(await takeOverIfLapsed(session)).toBe(false);
    expect(takeOverIfLapsed(session)).toBeNull();
    await getDb()
      .updateTable("live_sessions")
      .set({ runner_lease_until: new Date(Date.now() - 1000) })
      .where("id", "=", id)
      .execute();
    expect(takeOverIfLapsed(session)).toBeNull();
    expect((await row(id)).runner_instance).toBe("instance-a");
    // The minute sweep leaves a lapsed session that still hears audio to a takeover; it pauses a quiet one.
    expect((await sweepLiveSessions(new Date(Date.now() + 5_000))).released).toBe(0);
    instance("instance-b", { takeoverEveryMs: 0 });
    expect(await takeOverIfLapsed(session)).toBe(true);
    expect((await row(id)).runner_instance).toBe("instance-b");
    abandonRun(id);
    expect((await sweepLiveSessions(new Date(Date.now() + 120_000))).released).toBe(1);
    expect(await row(id)).toMatchObject({ runner_instance: null, status: "paused" });
  }, 60_000);
});
