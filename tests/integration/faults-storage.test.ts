import fs from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { healthReport } from "~/services/admin/health.server";
import { getFixedTFor } from "~/services/web/i18n.server";
import { setSpeechEngine } from "~/services/speech/engine.server";
import {
  createStorage,
  getStorage,
  ownerPrefix,
  setStorage,
  type StorageConfig,
} from "~/services/storage/storage.server";
import { runTranscriptionJob } from "~/services/transcription/job.server";
import { getDb } from "~/models/db.server";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { heldSpeechEngine, meteredUnits, seedReadyRecording, stateOf } from "../support/faults";
import { serve } from "../support/remix-document";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy";
import { APP_URL, request, setupTestApp, signedInUser } from "../setup/app";

// Object storage down and back (the hardening issue's fault suite): S3 mode against the local S3-compatible
// server, reached through a TCP proxy the test cuts — every connection torn down, new ones refused. Whatever a
// user does meanwhile answers "temporarily unavailable" and leaves the recording as it was; once storage is back
// the same action works, and nothing saved is lost.
const app = setupTestApp({ storage: "s3" });
const speech = heldSpeechEngine();
let proxy: TcpProxy;
let dir: string;
let wav: string;

beforeAll(async () => {
  const config = app.config.storage as Extract<StorageConfig, { kind: "s3" }>;
  const endpoint = new URL(config.endpoint!);
  proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
  setStorage(createStorage({ ...config, endpoint: `http://${proxy.host}:${proxy.port}` }));
  speech.release();
  setSpeechEngine(speech.engine);
  dir = await makeTempDir();
  wav = await makeSpeechWav(dir);
});
// A failed test must not leave the next one without its service.
afterEach(() => proxy.restore());
afterAll(async () => {
  setSpeechEngine(undefined);
  await proxy?.close();
  await removeTempDir(dir);
});

const UNAVAILABLE = { detail: "Service temporarily unavailable. Please try again." };
const sameOrigin = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };

function api(cookie: string, path: string, json?: unknown) {
  const init = json === undefined ? {} : { method: "POST", body: JSON.stringify(json) };
  return serve(request(path, { cookie, ...init, headers: { "Content-Type": "application/json", ...sameOrigin } }));
}

function form(cookie: string, body: FormData | URLSearchParams) {
  return serve(request("/?index", { cookie, method: "POST", headers: sameOrigin, body }));
}

async function recordingsOf(userId: string) {
  return getDb().selectFrom("recordings").where("owner_id", "=", userId).select(["id", "upload_status"]).execute();
}

describe("object storage down and back", () => {
  it("a confirm waits: 503, the recording keeps its slot; confirmed once storage is back", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { user, cookie } = await signedInUser({ email: "speicher@praxis.example" });
    const slot = await api(cookie, "/api/get-upload-url", {
      file_name: "Sprechstunde.wav",
      file_type: "audio/wav",
      language_code: "de",
    });
    const { url, key } = await slot.json();
    const put = await fetch(url, {
      method: "PUT",
      headers: { "Content-Type": "audio/wav" },
      body: fs.readFileSync(wav),
    });
    expect(put.status).toBe(200);

    await proxy.cut();
    const confirm = await api(cookie, "/api/update-file-metadata", { s3_key: key, metadata: {} });
    expect(confirm.status).toBe(503);
    expect(confirm.headers.get("Retry-After")).toBe("30");
    expect(await confirm.json()).toEqual(UNAVAILABLE);
    // Not ready, not rejected, not deleted: the slot waits with its bytes. The health check names storage.
    expect(await recordingsOf(user.id)).toEqual([{ id: expect.any(String), upload_status: "awaiting_upload" }]);
    expect(await healthReport()).toMatchObject({ s3_connected: false, storage: { status: "error" } });

    await proxy.restore();
    const again = await api(cookie, "/api/update-file-metadata", { s3_key: key, metadata: {} });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ success: true, key });
    expect(await recordingsOf(user.id)).toEqual([{ id: expect.any(String), upload_status: "ready" }]);
    expect(await healthReport()).toMatchObject({ s3_connected: true, storage: { status: "healthy" } });
    warn.mockRestore();
  });

  it("the upload form says so in its banner and stores nothing; sent again, it works", async () => {
    const t = await getFixedTFor("de", ["common"]);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { user, cookie } = await signedInUser({ email: "formular@praxis.example" });
    const upload = () => {
      const body = new FormData();
      body.append("audio", new Blob([fs.readFileSync(wav)], { type: "audio/wav" }), "Sprechstunde.wav");
      body.append("language", "de-DE");
      body.append("mode", "transcript");
      return form(cookie, body);
    };
    await proxy.cut();
    const refused = await upload();
    expect(refused.status).toBe(503);
    const html = await refused.text();
    expect(html).toContain(t("errors.unavailable"));
    expect(html).toContain('name="audio"');
    expect(await recordingsOf(user.id)).toEqual([]);

    await proxy.restore();
    expect((await upload()).status).toBe(302);
    expect(await recordingsOf(user.id)).toEqual([{ id: expect.any(String), upload_status: "ready" }]);
    warn.mockRestore();
  });

  it("a transcription is retried, not stuck, and ends with one transcript and no stray object", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { user, cookie } = await signedInUser({ email: "transkript@praxis.example" });
    const callsBefore = speech.calls;
    const recording = await seedReadyRecording({ ownerId: user.id, wav });
    const started = await api(cookie, "/api/transcribe_v2", { s3_key: recording.key });
    const { job_name } = await started.json();
    const jobId = (
      await getDb()
        .selectFrom("transcription_jobs")
        .where("job_name", "=", job_name)
        .select("id")
        .executeTakeFirstOrThrow()
    ).id;
    const status = async () => (await api(cookie, `/api/transcribe_v2/${job_name}/status`)).json();

    // Storage down: the audio cannot be read, the run is queued again and the recording shows "processing".
    await proxy.cut();
    expect(await runTranscriptionJob(jobId)).toBe("retry");
    expect(await status()).toMatchObject({ status: "processing" });
    // Back, but gone again while the transcript is written: the run stores nothing and is queued again.
    await proxy.restore();
    const cut = proxy.cutOnData(`/${ownerPrefix("transcripts", user.id)}`);
    expect(await runTranscriptionJob(jobId)).toBe("retry");
    await cut;
    await proxy.restore();
    expect(await stateOf(recording.id)).toMatchObject({
      recording: { transcription_status: "processing" },
      transcripts: 0,
    });
    expect(await runTranscriptionJob(jobId)).toBe("completed");

    const done = await status();
    expect(done).toMatchObject({ status: "completed", error: null });
    expect(await stateOf(recording.id)).toMatchObject({ transcripts: 1, transcriptionJobs: 1 });
    expect(await getStorage().list(ownerPrefix("transcripts", user.id))).toEqual([done.transcript_key]);
    // Usage follows the engine's work: each call that returned is metered, once.
    expect(speech.calls - callsBefore).toBe(2);
    expect(await meteredUnits(user.id, "transcribe_v2")).toHaveLength(2);

    // Reading the transcript while storage is down: 503; afterwards it is all there.
    const short = String(done.transcript_key).replace(/^transcripts\//, "");
    await proxy.cut();
    expect((await api(cookie, `/api/transcript_v2/${short}`)).status).toBe(503);
    await proxy.restore();
    expect(await (await api(cookie, `/api/transcript_v2/${short}`)).json()).toMatchObject({
      source_key: recording.key,
    });
    warn.mockRestore();
  });

  it("playback, delete and reset change nothing while storage is down, and work once it is back", async () => {
    const t = await getFixedTFor("de", ["common"]);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { user, cookie } = await signedInUser({ email: "loeschen@praxis.example" });
    const running = await seedReadyRecording({ ownerId: user.id, wav });
    await api(cookie, "/api/transcribe_v2", { s3_key: running.key });
    const finished = await seedReadyRecording({ ownerId: user.id, wav });
    await api(cookie, "/api/transcribe_v2", { s3_key: finished.key });
    const finishedJob = await getDb()
      .selectFrom("transcription_jobs")
      .where("recording_id", "=", finished.id)
      .select("id")
      .executeTakeFirstOrThrow();
    expect(await runTranscriptionJob(finishedJob.id)).toBe("completed");
    const before = { running: await stateOf(running.id), finished: await stateOf(finished.id) };

    await proxy.cut();
    // Playback hands out a short-lived URL without asking storage; the player's request is what fails.
    const playback = await api(cookie, `/api/audio-playback/${running.key}`);
    expect(playback.status).toBe(200);
    const { playback_url } = await playback.json();
    await expect(fetch(playback_url)).rejects.toThrow();
    expect((await api(cookie, "/api/delete-all", { s3_key: running.key })).status).toBe(503);
    const screenDelete = await form(cookie, new URLSearchParams({ intent: "delete", key: running.key }));
    expect(screenDelete.status).toBe(503);
    expect(await screenDelete.text()).toContain(t("errors.unavailable"));
    expect((await api(cookie, "/api/force-cleanup", { s3_key: finished.key })).status).toBe(503);
    // Still "processing" with its job (not a status no job will ever end), and still transcribed.
    expect(await stateOf(running.id)).toEqual(before.running);
    expect(await stateOf(finished.id)).toEqual(before.finished);

    await proxy.restore();
    const audio = await fetch(playback_url);
    expect(Buffer.from(await audio.arrayBuffer()).equals(fs.readFileSync(wav))).toBe(true);
    expect(await (await api(cookie, "/api/delete-all", { s3_key: running.key })).json()).toEqual({ success: true });
    expect((await stateOf(running.id)).recording).toBeUndefined();
    expect(await getStorage().head(running.key)).toBeNull();
    expect((await api(cookie, "/api/force-cleanup", { s3_key: finished.key })).status).toBe(200);
    expect(await stateOf(finished.id)).toMatchObject({
      recording: { transcription_status: "pending" },
      transcripts: 0,
    });
    warn.mockRestore();
  });
});
