import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getFixedTFor } from "~/services/web/i18n.server";
import { openDatabase, setDatabase, type DatabaseHandle } from "~/models/db.server";
import { healthReport } from "~/services/admin/health.server";
import { setJobs, type JobsHandle } from "~/services/jobs/queue.server";
import { startJobs } from "~/services/jobs/registry.server";
import { setSpeechEngine } from "~/services/speech/engine.server";
import { LEASE_MS, sweepTranscriptionJobs } from "~/services/transcription/job.server";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { heldSpeechEngine, meteredUnits, seedReadyRecording, stateOf } from "../support/faults";
import { serve } from "../support/remix-document";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy";
import { APP_URL, request, setupTestApp, signedInUser } from "../setup/app";

// The database goes away and comes back (the hardening issue's fault suite). The app reaches its database — the
// embedded PGlite's socket, or PostgreSQL — through a TCP proxy the test controls, exactly as it would over the
// network: cutting the proxy tears down every connection and refuses new ones. The queue runs in-process, as with
// `npm start`. The test itself reads the database directly, past the proxy, to see what was (not) written.
const app = setupTestApp();
const speech = heldSpeechEngine();
let proxy: TcpProxy;
let proxied: DatabaseHandle;
let jobs: JobsHandle;
let dir: string;
let wav: string;

beforeAll(async () => {
  const direct = app.database.handle;
  const url = new URL(direct.connectionString);
  proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
  url.host = `${proxy.host}:${proxy.port}`;
  // The embedded database's pool holds one connection (ADR 0002); PostgreSQL's several.
  proxied = await openDatabase({ kind: "postgres", url: url.toString(), poolSize: direct.kind === "pglite" ? 1 : 4 });
  setDatabase(proxied);
  jobs = await startJobs({ pool: proxied.pool, work: true, schedule: false });
  setJobs(jobs);
  setSpeechEngine(speech.engine);
  dir = await makeTempDir();
  wav = await makeSpeechWav(dir);
});
// A failed test must not leave the next one without its service.
afterEach(() => proxy.restore());
afterAll(async () => {
  speech.release();
  setJobs(undefined);
  await jobs?.stop();
  setSpeechEngine(undefined);
  setDatabase(app.database.handle);
  await proxied?.close();
  await proxy?.close();
  await removeTempDir(dir);
});

/** What is really stored, read past the proxy: also while the app cannot reach it. */
const stored = (recordingId: string) => stateOf(recordingId, app.database.db);

const post = (cookie: string, fields: Record<string, string>) =>
  serve(
    request("/?index", {
      cookie,
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: APP_URL,
        "Sec-Fetch-Site": "same-origin",
      },
      body: new URLSearchParams(fields).toString(),
    }),
  );

async function timed(work: () => Promise<Response>) {
  const started = Date.now();
  const response = await work();
  return { response, html: await response.text(), ms: Date.now() - started };
}

describe("the database down and back", () => {
  it("says 'temporarily unavailable' on pages, forms and the API, loses no running job, and serves again", async () => {
    const t = await getFixedTFor("de", ["common"]);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { user, cookie } = await signedInUser({ email: "ausfall@praxis.example" });
    const recording = await seedReadyRecording({ ownerId: user.id, wav });
    expect((await post(cookie, { intent: "transcribe", key: recording.key })).status).toBe(302);
    // The in-process worker has the job and waits for the engine.
    await vi.waitFor(() => expect(speech.calls).toBe(1), { timeout: 15_000 });

    await proxy.cut();
    // A page: the error page with its translated message, at once — no hang, no stack trace.
    const page = await timed(() => serve(request("/", { cookie })));
    expect(page.response.status).toBe(503);
    expect(page.html).toContain(t("errors.unavailableTitle"));
    expect(page.html).toContain(t("errors.unavailable"));
    expect(page.html).not.toMatch(/ECONNREFUSED|node_modules|\n\s+at /);
    expect(page.ms).toBeLessThan(10_000);
    // A form: the same answer, and nothing written.
    const rename = await timed(() => post(cookie, { intent: "rename", key: recording.key, displayName: "Neu" }));
    expect(rename.response.status).toBe(503);
    expect(rename.html).toContain(t("errors.unavailable"));
    // The JSON API: a 503 with its detail — not a 401 that would send a signed-in client to sign in again.
    const api = await serve(request("/api/files", { cookie }));
    expect(api.status).toBe(503);
    expect(api.headers.get("Retry-After")).toBe("30");
    expect(await api.json()).toEqual({ detail: "Service temporarily unavailable. Please try again." });
    // The admin health check names the database; the load balancer's liveness probe still finds the process.
    expect((await healthReport()).service_tests.database.status).toBe("error");
    expect((await serve(request("/resources/healthz"))).status).toBe(200);

    // The engine answers while the database is still away: the run cannot store the transcript and ends.
    speech.release();
    await vi.waitFor(() => expect(warn.mock.calls.map(String).join("\n")).toContain("could not record the failure"), {
      timeout: 10_000,
    });
    expect(await stored(recording.id)).toMatchObject({
      recording: { transcription_status: "processing", display_name: null },
      transcripts: 0,
    });

    await proxy.restore();
    // Served again without a restart; the recording is still visibly in progress, not lost and not failed.
    const back = await timed(() => serve(request("/", { cookie })));
    expect(back.response.status).toBe(200);
    expect(back.html).toContain('data-status="processing"');
    expect((await healthReport()).service_tests.database.status).toBe("healthy");
    // The dead run still holds its lease; once it lapses the sweep (every minute) hands the job on.
    expect((await sweepTranscriptionJobs()).requeued).toBe(0);
    expect((await sweepTranscriptionJobs(new Date(Date.now() + LEASE_MS + 1_000))).requeued).toBe(1);
    await vi.waitFor(
      async () => expect((await stateOf(recording.id)).recording?.transcription_status).toBe("completed"),
      {
        timeout: 15_000,
      },
    );
    expect(await stateOf(recording.id)).toMatchObject({ transcripts: 1, transcriptionJobs: 1 });
    expect(await meteredUnits(user.id, "transcribe_v2")).toHaveLength(1);
    const done = await serve(request("/", { cookie }));
    expect(await done.text()).toContain('data-status="completed"');
    warn.mockRestore();
  });

  it("rolls back a form whose transaction loses the database halfway; the same form works once it is back", async () => {
    const t = await getFixedTFor("de", ["common"]);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { user, cookie } = await signedInUser({ email: "halb@praxis.example" });
    const recording = await seedReadyRecording({ ownerId: user.id, wav });
    // Starting a transcription writes the job row, the recording's status and the queue's wake-up in one
    // transaction: the connection dies when the job row is sent.
    const cut = proxy.cutOnData('insert into "transcription_jobs"');
    const failed = await timed(() => post(cookie, { intent: "transcribe", key: recording.key }));
    await cut;
    // The form's failure and the page around it both need the database: the page says it is unavailable.
    expect(failed.response.status).toBe(503);
    expect(failed.html).toContain(t("errors.unavailableTitle"));
    expect(failed.html).not.toMatch(/Connection terminated|node_modules|\n\s+at /);
    // Nothing half-written: no job, the recording still "pending", so the list offers "transcribe" again.
    expect(await stored(recording.id)).toMatchObject({
      recording: { transcription_status: "pending" },
      transcriptionJobs: 0,
      transcripts: 0,
    });

    await proxy.restore();
    expect((await post(cookie, { intent: "transcribe", key: recording.key })).status).toBe(302);
    await vi.waitFor(
      async () => expect((await stateOf(recording.id)).recording?.transcription_status).toBe("completed"),
      {
        timeout: 15_000,
      },
    );
    expect(await stateOf(recording.id)).toMatchObject({ transcripts: 1, transcriptionJobs: 1 });
    warn.mockRestore();
  });
});
