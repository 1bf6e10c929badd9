import { describe, expect, it } from "vitest";
import { action as promptsAction } from "~/routes/api.prompts";
import { MAX_JSON_BODY_BYTES } from "~/services/web/api.server";
import { getDb } from "~/models/db.server";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Issue 22 (outside security check): a 12 MB JSON body was read whole and answered 400 "Invalid JSON body". A body
// over the limit is a 413 whose detail names the limit — in the SPEC's English for API clients, in German for the
// app's own scripts (X-Skribent-Language) — decided before the body is read whole.
setupTestApp();

const MB = 1024 * 1024;
const CHUNK = 64 * 1024;

/** `{"title":"aaa…"}` of `total` bytes, handed out chunk by chunk only when read; `pulled` counts what was read. */
function countedJson(total: number) {
  const head = new TextEncoder().encode('{"title":"');
  const tail = new TextEncoder().encode('"}');
  const counter = { pulled: 0 };
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const left = total - sent;
        if (left <= 0) return controller.close();
        let chunk: Uint8Array;
        if (sent === 0) chunk = head;
        else if (left === tail.length) chunk = tail;
        else chunk = new Uint8Array(Math.min(CHUNK, left - tail.length)).fill(0x61);
        sent += chunk.length;
        counter.pulled += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, counter };
}

async function post(cookie: string, body: BodyInit, headers: Record<string, string> = {}) {
  const response = await callRoute(
    promptsAction,
    request("/api/prompts", {
      method: "POST",
      cookie,
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin", ...headers },
      body,
      duplex: "half",
    } as RequestInit),
  );
  return { status: response.status, body: (await response.json()) as { detail?: string } };
}

async function promptsOf(userId: string) {
  return (await getDb().selectFrom("saved_prompts").where("owner_id", "=", userId).select("id").execute()).length;
}

describe("a JSON body over the limit", () => {
  it("is refused by its Content-Length with 413 naming the limit, before a byte of it is read", async () => {
    const { user, cookie } = await signedInUser({ email: "json-length@praxis.example" });
    const total = 12 * MB;
    const { stream, counter } = countedJson(total);
    const answer = await post(cookie, stream, { "Content-Length": String(total) });
    expect(answer).toEqual({ status: 413, body: { detail: "The request body is too large: at most 10 MB of JSON." } });
    expect(counter.pulled).toBe(0);
    expect(await promptsOf(user.id)).toBe(0);
  });

  it("sent in chunks without a length, is read only up to the limit, then refused with 413", async () => {
    const { user, cookie } = await signedInUser({ email: "json-chunked@praxis.example" });
    const { stream, counter } = countedJson(12 * MB);
    const answer = await post(cookie, stream);
    expect(answer.status).toBe(413);
    expect(answer.body.detail).toBe("The request body is too large: at most 10 MB of JSON.");
    expect(counter.pulled).toBeGreaterThan(MAX_JSON_BODY_BYTES);
    expect(counter.pulled).toBeLessThanOrEqual(MAX_JSON_BODY_BYTES + CHUNK);
    expect(await promptsOf(user.id)).toBe(0);
  });

  it("is refused in German for the app's own scripts", async () => {
    const { cookie } = await signedInUser({ email: "json-deutsch@praxis.example" });
    const { stream } = countedJson(12 * MB);
    const answer = await post(cookie, stream, { "X-Skribent-Language": "de" });
    expect(answer).toEqual({ status: 413, body: { detail: "Die Anfrage ist zu groß: höchstens 10 MB JSON." } });
  });

  it("is the limit exactly: a body of 10 MB is read and judged by its fields, and small JSON still works", async () => {
    const { user, cookie } = await signedInUser({ email: "json-grenze@praxis.example" });
    const atLimit = countedJson(MAX_JSON_BODY_BYTES);
    const judged = await post(cookie, atLimit.stream, { "Content-Length": String(MAX_JSON_BODY_BYTES) });
    expect(atLimit.counter.pulled).toBe(MAX_JSON_BODY_BYTES);
    expect(judged.status).toBe(400);
    expect(judged.body.detail).not.toMatch(/too large|Invalid JSON/);
    expect((await post(cookie, "{not json")).body).toEqual({ detail: "Invalid JSON body" });
    const saved = await post(cookie, JSON.stringify({ title: "Kürzer", prompt_text: "Bitte kürzer fassen" }));
    expect(saved.status).toBe(201);
    expect(await promptsOf(user.id)).toBe(1);
  });
});
