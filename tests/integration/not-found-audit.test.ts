import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import { getStorage, makeStorageKey } from "~/services/storage/storage.server";
import { flipFirstChar } from "../support/storage-helpers";
import { NOT_FOUND_AUDITS_PER_WINDOW, resetNotFoundBudgets } from "~/services/audit/not-found-audit.server";
import { sessionFor } from "../support/admin-pages";
import { browserFor, type Browser } from "../support/injection-world";
import { openLiveSocket, startLiveDoor } from "../support/live-client";
import { seedTranscribedRecording } from "../support/letter-fixtures";
import { serve } from "../support/remix-document";
import { toneWav } from "../support/wav";
import { APP_URL, request, setupTestApp } from "../setup/app";

// ASVS 5.0 16.3.2: another user's id or key is answered 404 (never 403, never data); the attempt leaves a denied
// row in the audit trail naming the caller and the path — through the whole app, for a page and a JSON call.
setupTestApp();

let anna: { userId: string; transcriptKey: string; browser: Browser };
let jonas: Browser;
let jonasId: string;

beforeAll(async () => {
  const owner = await sessionFor("anna@praxis-notfound.example");
  const { transcriptKey } = await seedTranscribedRecording({
    ownerId: owner.user.id,
    lines: [{ speaker: "S1", text: "Befund von Anna" }],
    fileName: "anna.wav",
  });
  anna = { userId: owner.user.id, transcriptKey, browser: await browserFor(owner.cookie) };
  const other = await sessionFor("jonas@praxis-notfound.example");
  jonasId = other.user.id;
  jonas = await browserFor(other.cookie);
}, 60_000);

beforeEach(async () => {
  resetNotFoundBudgets();
  await getDb().deleteFrom("audit_events").where("action", "in", ["access.not-found", "storage.signature"]).execute();
});

const deniedRows = (action = "access.not-found") =>
  getDb()
    .selectFrom("audit_events")
    .where("action", "=", action)
    .select(["user_id", "entity_type", "entity_id", "outcome"])
    .orderBy("id")
    .execute();

describe("another user's key", () => {
  it("is a 404 with a denied audit row naming the caller, for a JSON call and a page", async () => {
    const api = `/api/transcript_v2/${anna.transcriptKey}`;
    const page = `/transcriptions/${anna.transcriptKey.replace(/^transcripts\//, "")}`;
    for (const path of [api, page]) {
      const answer = await jonas.get(path);
      expect(answer.status, path).toBe(404);
      expect(await answer.text(), path).not.toContain("Befund von Anna");
    }
    const rows = await deniedRows();
    expect(rows).toEqual([
      { user_id: jonasId, entity_type: "path", entity_id: api, outcome: "denied" },
      { user_id: jonasId, entity_type: "path", entity_id: page, outcome: "denied" },
    ]);
  });

  it("is not audited for a caller who is not signed in: there is nobody to name", async () => {
    const answer = await serve(request(`/api/transcript_v2/${anna.transcriptKey}`));
    expect(answer.status).toBe(401);
    expect(await deniedRows()).toEqual([]);
  });

  it("writes a bounded number of rows when someone walks through ids", async () => {
    for (let guess = 0; guess < NOT_FOUND_AUDITS_PER_WINDOW + 5; guess++) {
      const answer = await jonas.get(`/api/transcript_v2/transcripts/${anna.userId}/guess-${guess}.json`);
      expect(answer.status).toBe(404);
    }
    const rows = await deniedRows();
    expect(rows).toHaveLength(NOT_FOUND_AUDITS_PER_WINDOW);
    expect(rows.at(-1)!.entity_id).toBe(
      `/api/transcript_v2/transcripts/${anna.userId}/guess-${NOT_FOUND_AUDITS_PER_WINDOW - 1}.json`,
    );
  });
});

describe("another user's live session", () => {
  it("is a 404 with a denied audit row, over HTTP and at the WebSocket door", async () => {
    const created = await anna.browser.json("/live/sessions", "POST", { kind: "recording", language: "de" });
    expect(created.status).toBeLessThan(300);
    const { id } = (await created.json()) as { id: string };
    const path = `/live/sessions/${id}`;
    expect((await jonas.get(path)).status).toBe(404);
    expect(await deniedRows()).toEqual([{ user_id: jonasId, entity_type: "path", entity_id: path, outcome: "denied" }]);

    // The WebSocket door names the session in its query string: the row names the session.
    const door = await startLiveDoor();
    try {
      await expect(
        openLiveSocket(`${door.url}?session=${id}`, { Cookie: jonas.cookie, Origin: APP_URL }),
      ).rejects.toThrow("HTTP 404");
    } finally {
      await door.close();
    }
    expect((await deniedRows()).at(-1)).toEqual({
      user_id: jonasId,
      entity_type: "live_session",
      entity_id: id,
      outcome: "denied",
    });
  });
});

describe("a storage URL", () => {
  it("with an altered signature is refused and audited with the key; a genuine one is not audited", async () => {
    const key = makeStorageKey({ ownerId: anna.userId, area: "audio", extension: ".wav" });
    await getStorage().put({ key, body: toneWav(0.2), contentType: "audio/wav" });
    const url = new URL(await getStorage().createDownloadUrl({ key }), APP_URL);
    const storagePath = (search: URLSearchParams) => `${url.pathname}?${search}`;
    expect((await serve(request(storagePath(url.searchParams)))).status).toBe(200);
    expect(await deniedRows("storage.signature")).toEqual([]);

    const altered = new URLSearchParams(url.searchParams);
    altered.set("sig", flipFirstChar(altered.get("sig")!));
    const refused = await serve(request(storagePath(altered)));
    expect(refused.status).toBe(403);
    expect(await deniedRows("storage.signature")).toEqual([
      { user_id: null, entity_type: "storage_key", entity_id: key, outcome: "denied" },
    ]);
  });
});
