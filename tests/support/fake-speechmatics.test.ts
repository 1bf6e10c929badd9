import { fetch, FormData } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeSpeechmatics, type FakeSpeechmatics } from "./fake-speechmatics";
import { noiseWav } from "./wav";

// The fake Speechmatics server against the published protocol (PROTOCOLS.md §1), so the adapter's tests
// stand on a server that behaves like the real one.

const KEY = "test-key";

describe("the fake Speechmatics server follows PROTOCOLS.md §1", () => {
  let server: FakeSpeechmatics;
  const auth = { Authorization: `Bearer ${KEY}` };

  beforeEach(async () => {
    server = await startFakeSpeechmatics({ apiKeys: [KEY] });
  });
  afterEach(async () => {
    await server.close();
  });

  function jobForm(config: unknown, data: Buffer | null = noiseWav(1)) {
    const form = new FormData();
    if (config !== undefined) form.append("config", typeof config === "string" ? config : JSON.stringify(config));
    if (data) form.append("data_file", new Blob([new Uint8Array(data)]), "a.wav");
    return form;
  }

  async function create(config: unknown = { type: "transcription", transcription_config: { language: "de" } }) {
    const response = await fetch(`${server.url}/jobs`, { method: "POST", headers: auth, body: jobForm(config) });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }

  it("rejects a job without config, type, language or data_file with 400", async () => {
    const cases: Array<[unknown, Buffer | null, string]> = [
      [undefined, noiseWav(1), "Job rejected"],
      ["{not json", noiseWav(1), "Job rejected"],
      [{ transcription_config: { language: "de" } }, noiseWav(1), "Job rejected"],
      [{ type: "transcription", transcription_config: {} }, noiseWav(1), "Job rejected"],
      [{ type: "transcription", transcription_config: { language: "de" } }, null, "Missing data_file"],
    ];
    for (const [config, data, error] of cases) {
      const response = await fetch(`${server.url}/jobs`, {
        method: "POST",
        headers: auth,
        body: jobForm(config, data),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 400, error });
    }
    expect(server.jobs).toHaveLength(0);
  });

  it("runs a job to done, 404s its transcript before that, locks DELETE without force", async () => {
    server.pollsUntilDone = 1;
    const id = await create();
    const early = await fetch(`${server.url}/jobs/${id}/transcript?wait=0`, { headers: auth });
    expect(early.status).toBe(404);
    const locked = await fetch(`${server.url}/jobs/${id}`, { method: "DELETE", headers: auth });
    expect(locked.status).toBe(423);
    expect(await locked.json()).toMatchObject({ code: 423, error: "Resource Locked" });
    const running = await fetch(`${server.url}/jobs/${id}?wait=0`, { headers: auth });
    expect(((await running.json()) as { job: { status: string } }).job.status).toBe("running");
    const done = await fetch(`${server.url}/jobs/${id}?wait=0`, { headers: auth });
    expect(((await done.json()) as { job: { status: string; duration: number } }).job).toMatchObject({
      status: "done",
      duration: 1,
    });
    const text = await fetch(`${server.url}/jobs/${id}/transcript?format=txt`, { headers: auth });
    expect(await text.text()).toContain("Guten Morgen, Frau Becker. Was führt Sie heute zu mir?");
    const deleted = await fetch(`${server.url}/jobs/${id}`, { method: "DELETE", headers: auth });
    expect(((await deleted.json()) as { job: { status: string } }).job.status).toBe("deleted");
  });

  it("force-deletes a running job", async () => {
    server.pollsUntilDone = 5;
    const id = await create();
    const response = await fetch(`${server.url}/jobs/${id}?force=true`, { method: "DELETE", headers: auth });
    expect(response.status).toBe(200);
    expect(server.jobs[0].deletion).toMatchObject({ force: true });
  });

  it("holds a poll until the job ends, never longer than the cap, and answers wait=0 at once", async () => {
    server.pollsUntilDone = 10;
    server.maxWaitMs = 200;
    const id = await create();
    let started = performance.now();
    await fetch(`${server.url}/jobs/${id}?wait=0`, { headers: auth });
    expect(performance.now() - started).toBeLessThan(150);
    started = performance.now();
    await fetch(`${server.url}/jobs/${id}?wait=30`, { headers: auth });
    expect(performance.now() - started).toBeGreaterThanOrEqual(180);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("pins jobs to their region, answers 401 as HTML or JSON and 429 without Retry-After", async () => {
    const id = await create();
    expect((await fetch(`${server.regionUrl("us1")}/jobs/${id}`, { headers: auth })).status).toBe(404);
    const html = await fetch(`${server.url}/jobs`, { headers: { Authorization: "Bearer nope" } });
    expect(html.status).toBe(401);
    expect(html.headers.get("content-type")).toBe("text/html");
    server.unauthorizedBody = "json";
    const json = await fetch(`${server.url}/jobs`);
    expect(await json.json()).toEqual({ code: 401, error: "Unauthorized" });
    server.rateLimit = { count: 1 };
    const limited = await fetch(`${server.url}/jobs/${id}`, { headers: auth });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBeNull();
    expect(await limited.json()).toMatchObject({ code: 429 });
  });
});
