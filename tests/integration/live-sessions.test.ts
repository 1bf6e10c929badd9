import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIVE_BUFFER_BYTES, type NumberedMessage, type TranscriptMessage } from "~/live/protocol";
import { action as createAction } from "~/routes/live.sessions";
import { action as sessionAction, loader as sessionLoader } from "~/routes/live.sessions.$";
import { getConfig, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { setLiveEngine } from "~/services/live/engine.server";
import { createSpeechmaticsRealtimeEngine } from "~/services/live/engines/speechmatics-rt.server";
import { stopBus } from "~/services/live/bus.server";
import { closeAllRuns } from "~/services/live/runner.server";
import { findResumableLiveSession } from "~/services/live/sessions.server";
import { settleMetering } from "~/services/admin/usage.server";
import { makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { startFakeSpeechmaticsRt, type FakeSpeechmaticsRt } from "../support/fake-speechmatics-rt";
import { openLiveSocket, readEvents, speechBuffers, startLiveDoor } from "../support/live-client";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The live door (issue 7, ADR 0013) end to end on the server: sessions created over HTTP, audio streamed over
// the WebSocket or POSTed, results as WebSocket messages or server-sent events, relayed to the tests'
// protocol-faithful Speechmatics realtime server. What a clinician would notice: every word spoken arrives,
// nothing is lost or doubled when the transport changes mid-recording, and a session nobody ended can be
// found again.
setupTestApp();
let fake: FakeSpeechmaticsRt;
let door: Awaited<ReturnType<typeof startLiveDoor>>;
let dir: string;
let speech: Buffer[];
const SCRIPT = [
  { speaker: "S1", text: "Guten Tag, was führt Sie zu mir?" },
  { speaker: "S2", text: "Ich habe seit drei Tagen Kopfschmerzen." },
];

beforeAll(async () => {
  fake = await startFakeSpeechmaticsRt({ script: SCRIPT });
  setLiveEngine(createSpeechmaticsRealtimeEngine({ apiKey: fake.apiKey, realtimeUrl: fake.url }));
  door = await startLiveDoor();
  dir = await makeTempDir();
  speech = await speechBuffers(dir, [SCRIPT[0].text, SCRIPT[1].text]);
}, 60_000);
afterAll(async () => {
  await closeAllRuns();
  await stopBus();
  setLiveEngine(undefined);
  await door.close();
  await fake.close();
  await removeTempDir(dir);
});

const START = {
  message: "StartRecognition",
  audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
  transcription_config: { language: "de" },
};

async function newSession(cookie: string, kind = "recording") {
  const response = await callRoute(
    createAction,
    request("/live/sessions", {
      method: "POST",
      cookie,
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin" },
      body: JSON.stringify({ kind, language: "de" }),
    }),
  );
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; max_delay: number };
}

function post(cookie: string, path: string, body: unknown, type = "application/json") {
  return callRoute(
    sessionAction,
    request(`/live/sessions/${path}`, {
      method: "POST",
      cookie,
      headers: { "Content-Type": type, "Sec-Fetch-Site": "same-origin" },
      body: type === "application/json" ? JSON.stringify(body) : new Uint8Array(body as Buffer),
    }),
    { "*": path.split("?")[0] },
  );
}

const words = (messages: NumberedMessage[]) =>
  messages
    .filter((m): m is TranscriptMessage & { n?: number } => m.message === "AddTranscript")
    .flatMap((m) => m.results.filter((r) => r.type === "word").map((r) => r.alternatives[0].content));

const heldBuffers = async (id: string) =>
  await getDb()
    .selectFrom("live_sessions")
    .select(["buffers", "samples"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();

describe("the WebSocket door", () => {
  it("relays a recording: every buffer stored once, finals with speakers, EndOfTranscript after EndOfStream", async () => {
    const { user, cookie } = await signedInUser({ email: "ws-live@example.org" });
    const config = getConfig();
    setConfig({ ...config, prices: { ...config.prices, speechLivePerMinuteUsd: 0.06 } });
    const session = await newSession(cookie);
    const live = await openLiveSocket(`${door.url}?session=${session.id}`, { Cookie: cookie, Origin: APP_URL });
    live.socket.send(JSON.stringify(START));
    const started = await live.next((m) => m.message === "RecognitionStarted");
    expect(started).toMatchObject({ last_seq_no: 0 });
    for (const buffer of speech) live.socket.send(buffer);
    await live.next((m) => m.message === "AudioAdded" && m.seq_no === speech.length);
    live.socket.send(JSON.stringify({ message: "EndOfStream", last_seq_no: speech.length }));
    await live.next((m) => m.message === "EndOfTranscript");
    live.socket.close(1000);

    expect(words(live.messages).join(" ")).toContain("Kopfschmerzen");
    const speakers = live.messages.flatMap((m) =>
      m.message === "AddTranscript" ? m.results.map((r) => r.alternatives[0].speaker) : [],
    );
    expect(new Set(speakers)).toEqual(new Set(["S1", "S2"]));
    const held = await heldBuffers(session.id);
    expect(held.buffers).toBe(speech.length);
    expect(Number(held.samples)).toBe(speech.reduce((sum, b) => sum + b.length / 2, 0));
    // What the relay sent upstream is exactly what the browser sent.
    const upstream = fake.sessions.at(-1)!;
    expect(upstream.bytes).toBe(speech.reduce((sum, b) => sum + b.length, 0));

    // The run's audio is on the usage table at the realtime price (0.06 USD a minute), and is no call.
    await settleMetering();
    setConfig(config);
    const seconds = Math.round(upstream.bytes / 32) / 1000; // metered to the millisecond
    const usage = await getDb()
      .selectFrom("usage_events")
      .select(["endpoint", "unit", "units", "cost_usd"])
      .where("user_id", "=", user.id)
      .execute();
    expect(usage.map((row) => ({ ...row, units: Number(row.units), cost_usd: Number(row.cost_usd) }))).toEqual([
      { endpoint: "speechmatics-jwt", unit: "audio_second", units: seconds, cost_usd: +(seconds * 0.001).toFixed(6) },
    ]);
  }, 60_000);

  it("refuses another site, no sign-in and another user's session before upgrading", async () => {
    const owner = await signedInUser({ email: "ws-owner@example.org" });
    const other = await signedInUser({ email: "ws-other@example.org" });
    const session = await newSession(owner.cookie);
    const url = `${door.url}?session=${session.id}`;
    await expect(openLiveSocket(url, { Cookie: owner.cookie, Origin: "https://evil.example" })).rejects.toThrow(
      "HTTP 403",
    );
    await expect(openLiveSocket(url, { Origin: APP_URL })).rejects.toThrow("HTTP 401");
    await expect(openLiveSocket(url, { Cookie: other.cookie, Origin: APP_URL })).rejects.toThrow("HTTP 404");
  });

  it("answers audio before StartRecognition with a protocol error and closes", async () => {
    const { cookie } = await signedInUser({ email: "ws-order@example.org" });
    const session = await newSession(cookie);
    const live = await openLiveSocket(`${door.url}?session=${session.id}`, { Cookie: cookie, Origin: APP_URL });
    live.socket.send(speech[0]);
    expect(await live.next((m) => m.message === "Error")).toMatchObject({ type: "protocol_error" });
    expect((await live.closed).code).toBe(1003);
  });
});

describe("the HTTP door and switching doors", () => {
  it("continues a WebSocket session over HTTP: contiguous buffers, re-sends ignored, no message twice", async () => {
    const { cookie, user } = await signedInUser({ email: "switch-live@example.org" });
    const session = await newSession(cookie);
    const half = Math.floor(speech.length / 2);
    const live = await openLiveSocket(`${door.url}?session=${session.id}`, { Cookie: cookie, Origin: APP_URL });
    live.socket.send(JSON.stringify(START));
    await live.next((m) => m.message === "RecognitionStarted");
    for (const buffer of speech.slice(0, half)) live.socket.send(buffer);
    await live.next((m) => m.message === "AudioAdded" && m.seq_no === half);
    // The proxy cuts the socket; the client goes on over HTTP.
    live.socket.terminate();
    const lastN = Math.max(0, ...live.messages.map((m) => m.n ?? 0));

    const started = await post(cookie, `${session.id}/start`, { ...START, last_n: lastN });
    expect(await started.json()).toMatchObject({ message: "RecognitionStarted", last_seq_no: half });
    // The client re-sends the last two buffers it had no answer for: they are not stored twice.
    const rest = Buffer.concat(speech.slice(half - 2));
    const added = await post(cookie, `${session.id}/audio?seq=${half - 1}`, rest, "application/octet-stream");
    expect(await added.json()).toEqual({ message: "AudioAdded", seq_no: speech.length });
    const gap = await post(
      cookie,
      `${session.id}/audio?seq=${speech.length + 5}`,
      speech[0],
      "application/octet-stream",
    );
    expect(gap.status).toBe(409);
    expect(await gap.json()).toMatchObject({ last_seq_no: speech.length });
    expect(
      (await post(cookie, `${session.id}/end`, { message: "EndOfStream", last_seq_no: speech.length })).status,
    ).toBe(202);

    const events = await callRoute(
      sessionLoader,
      request(`/live/sessions/${session.id}/events`, { cookie, headers: { "Last-Event-ID": String(lastN) } }),
      { "*": `${session.id}/events` },
    );
    expect(events.headers.get("Content-Type")).toContain("text/event-stream");
    const streamed = await readEvents(events, (m) => m.message === "EndOfTranscript");
    const all = [...live.messages.filter((m) => m.n !== undefined), ...streamed];
    const numbers = all.map((m) => m.n);
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(words(all).join(" ")).toContain("Kopfschmerzen");

    const held = await heldBuffers(session.id);
    expect(held.buffers).toBe(speech.length);
    expect(Number(held.samples)).toBe(speech.reduce((sum, b) => sum + b.length / 2, 0));
    const seqs = await getDb()
      .selectFrom("live_audio")
      .select("seq")
      .where("session_id", "=", session.id)
      .orderBy("seq")
      .execute();
    expect(seqs.map((r) => r.seq)).toEqual(speech.map((_, i) => i + 1));

    // Stopped with text: a paused session, found again after a reload.
    const resumable = await findResumableLiveSession(user.id);
    expect(resumable?.id).toBe(session.id);
    expect(resumable?.transcript.map((s) => s.text).join(" ")).toContain("Kopfschmerzen");
  }, 60_000);

  it("saves a recording nobody stopped (a reload): the last words are recognised, the audio is kept", async () => {
    const { cookie } = await signedInUser({ email: "reload-live@example.org" });
    const session = await newSession(cookie);
    const live = await openLiveSocket(`${door.url}?session=${session.id}`, { Cookie: cookie, Origin: APP_URL });
    live.socket.send(JSON.stringify(START));
    await live.next((m) => m.message === "RecognitionStarted");
    for (const buffer of speech) live.socket.send(buffer);
    await live.next((m) => m.message === "AudioAdded" && m.seq_no === speech.length);
    live.socket.terminate();

    const saved = await post(cookie, `${session.id}/save`, {
      template_id: "entlassbrief",
      transcription_mode: "transcript",
      audio_copy: false,
    });
    const body = await saved.json();
    expect(body, JSON.stringify(body)).toHaveProperty("transcript_key");
    const transcriptKey = body.transcript_key as string;
    const transcript = await getDb()
      .selectFrom("transcripts")
      .select(["word_count", "speaker_count", "audio_seconds"])
      .where("storage_key", "=", transcriptKey)
      .executeTakeFirstOrThrow();
    expect(transcript.speaker_count).toBe(2);
    expect(transcript.word_count).toBeGreaterThan(8);
    expect(transcript.audio_seconds).toBeCloseTo(speech.reduce((sum, b) => sum + b.length / 2, 0) / 16_000, 0);
    // Saved: the session's own copies of audio and text are gone.
    const audio = await getDb().selectFrom("live_audio").select("seq").where("session_id", "=", session.id).execute();
    expect(audio).toEqual([]);
  }, 60_000);

  it("keeps another user out of every HTTP call", async () => {
    const owner = await signedInUser({ email: "http-owner@example.org" });
    const other = await signedInUser({ email: "http-other@example.org" });
    const session = await newSession(owner.cookie);
    expect((await post(other.cookie, `${session.id}/start`, START)).status).toBe(404);
    expect((await post(other.cookie, `${session.id}/discard`, {})).status).toBe(404);
    const view = await callRoute(sessionLoader, request(`/live/sessions/${session.id}`, { cookie: other.cookie }), {
      "*": session.id,
    });
    expect(view.status).toBe(404);
  });

  it("discarding deletes the audio and the text", async () => {
    const { cookie, user } = await signedInUser({ email: "discard-live@example.org" });
    const session = await newSession(cookie);
    await post(cookie, `${session.id}/start`, START);
    await post(cookie, `${session.id}/audio?seq=1`, Buffer.concat(speech.slice(0, 4)), "application/octet-stream");
    expect((await post(cookie, `${session.id}/discard`, {})).status).toBe(204);
    const audio = await getDb().selectFrom("live_audio").select("seq").where("session_id", "=", session.id).execute();
    expect(audio).toEqual([]);
    expect(await findResumableLiveSession(user.id)).toBeNull();
  });

  it("refuses audio that is not whole 16-bit samples, and more than a POST may carry", async () => {
    const { cookie } = await signedInUser({ email: "bad-audio@example.org" });
    const session = await newSession(cookie);
    await post(cookie, `${session.id}/start`, START);
    expect((await post(cookie, `${session.id}/audio?seq=1`, Buffer.alloc(3), "application/octet-stream")).status).toBe(
      400,
    );
    const tooMuch = Buffer.alloc(33 * LIVE_BUFFER_BYTES);
    expect((await post(cookie, `${session.id}/audio?seq=1`, tooMuch, "application/octet-stream")).status).toBe(413);
    // Sent in chunks without a length, it is cut off at the same limit, not read whole into memory.
    const chunked = new Request(`${APP_URL}/live/sessions/${session.id}/audio?seq=1`, {
      method: "POST",
      headers: { Cookie: cookie, "Content-Type": "application/octet-stream", "Sec-Fetch-Site": "same-origin" },
      body: new ReadableStream({
        pull(controller) {
          controller.enqueue(new Uint8Array(LIVE_BUFFER_BYTES));
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect((await callRoute(sessionAction, chunked, { "*": `${session.id}/audio` })).status).toBe(413);
    // Past four hours (the upload cap) a stream is refused, so one nobody stops cannot fill the database.
    const late = await post(cookie, `${session.id}/audio?seq=56252`, speech[0], "application/octet-stream");
    expect(late.status).toBe(413);
    expect(await late.json()).toMatchObject({ type: "duration_limit_exceeded" });
    await post(cookie, `${session.id}/discard`, {});
  });
});
