import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SIGNED_OUT_REASON } from "~/live/protocol";
import { action as adminSessionsAction } from "~/routes/$adminPath.sessions/route";
import { action as createAction } from "~/routes/live.sessions";
import { getDb } from "~/models/db.server";
import { setLiveEngine } from "~/services/live/engine.server";
import { createSpeechmaticsRealtimeEngine } from "~/services/live/engines/speechmatics-rt.server";
import { stopBus } from "~/services/live/bus.server";
import { closeAllRuns } from "~/services/live/runner.server";
import { endSession } from "~/services/web/session.server";
import { sessionFor } from "../support/admin-pages";
import { makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { startFakeSpeechmaticsRt, type FakeSpeechmaticsRt } from "../support/fake-speechmatics-rt";
import { openLiveSocket, speechBuffers, startLiveDoor } from "../support/live-client";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// A live recording over the WebSocket keeps its sign-in alive while it streams, and checks it once a minute: when
// the clinician has signed out meanwhile (or ended this session from Settings › Aktive Sitzungen, or an admin ended
// it at ADMIN_PATH/sessions, or it reached its absolute limit), the stream stops with the reason the recorder shows
// as "your sign-in ended", and what was sent before stays with the live session, to continue or save after signing
// in again.
setupTestApp();
let fake: FakeSpeechmaticsRt;
let door: Awaited<ReturnType<typeof startLiveDoor>>;
let dir: string;
let speech: Buffer[];

beforeAll(async () => {
  fake = await startFakeSpeechmaticsRt({ script: [{ speaker: "S1", text: "Guten Tag." }] });
  setLiveEngine(createSpeechmaticsRealtimeEngine({ apiKey: fake.apiKey, realtimeUrl: fake.url }));
  door = await startLiveDoor();
  dir = await makeTempDir();
  speech = await speechBuffers(dir, ["Guten Tag."]);
}, 60_000);
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  await closeAllRuns();
  await stopBus();
  setLiveEngine(undefined);
  await door.close();
  await fake.close();
  await removeTempDir(dir);
});

/** A recording streaming over the WebSocket, its first buffer stored; the rest of the speech still to send. */
async function streaming(cookie: string) {
  const created = await callRoute(
    createAction,
    request("/live/sessions", {
      method: "POST",
      cookie,
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin" },
      body: JSON.stringify({ kind: "recording", language: "de" }),
    }),
  );
  const session = (await created.json()) as { id: string };
  const url = `${door.url}?session=${session.id}`;
  const live = await openLiveSocket(url, { Cookie: cookie, Origin: APP_URL });
  live.socket.send(
    JSON.stringify({
      message: "StartRecognition",
      audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
      transcription_config: { language: "de" },
    }),
  );
  await live.next((m) => m.message === "RecognitionStarted");
  const [before, ...after] = speech;
  live.socket.send(before);
  await live.next((m) => m.message === "AudioAdded" && m.seq_no === 1);
  return { id: session.id, url, live, after };
}

/** A minute of recording later (only the clock moves: no sleeping), the stream stops as signed out. */
async function expectStoppedAsSignedOut({ id, live, after }: Awaited<ReturnType<typeof streaming>>) {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 61_000 });
  for (const buffer of after) live.socket.send(buffer);
  const error = await live.next((m) => m.message === "Error");
  expect(error).toMatchObject({ type: "not_authorised", reason: SIGNED_OUT_REASON });
  expect(await live.closed).toMatchObject({ code: 4001 });
  const held = await getDb()
    .selectFrom("live_sessions")
    .select(["buffers", "status"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  expect(held.buffers).toBe(1);
  expect(live.messages.filter((m) => m.message === "AudioAdded")).toHaveLength(1);
}

describe("the WebSocket door after the sign-in ended", () => {
  it("stops the stream within a minute and keeps what was sent before", async () => {
    const { cookie } = await signedInUser({ email: "ws-abgemeldet@example.org" });
    const stream = await streaming(cookie);
    // Signed out in another tab.
    await endSession(request("/logout", { method: "POST", cookie }));
    await expectStoppedAsSignedOut(stream);
  }, 60_000);

  it("stops the stream and refuses the next connect when an admin ended the user's sessions", async () => {
    const { cookie } = await signedInUser({ email: "ws-beendet@example.org" });
    const admin = await sessionFor("admin@skribent.example");
    const stream = await streaming(cookie);
    const ended = await callRoute(
      adminSessionsAction,
      request("/betrieb/sessions", {
        method: "POST",
        cookie: admin.cookie,
        headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
        body: new URLSearchParams({ intent: "end-account", email: "ws-beendet@example.org" }).toString(),
      }),
      { adminPath: "betrieb" },
    );
    expect(ended.status).toBe(302);
    await expectStoppedAsSignedOut(stream);
    // Reconnecting (the recorder's next try) is refused before the upgrade, as without any sign-in.
    await expect(openLiveSocket(stream.url, { Cookie: cookie, Origin: APP_URL })).rejects.toThrow("HTTP 401");
  }, 60_000);
});
