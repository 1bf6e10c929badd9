import { describe, expect, it } from "vitest";
import { loader as workspaceLoader } from "~/routes/_app._index/route";
import { loader as filesLoader } from "~/routes/api.files";
import { action as renameAction } from "~/routes/api.rename-file";
import { getDb } from "~/models/db.server";
import { APP_URL, callRoute, request, signedInUser, setupTestApp } from "../setup/app";
import { fromAnotherConnection } from "../support/another-connection";

// Each instance keeps a clinician's lists (models/owner-cache.server.ts, ADR 0038). Whatever changes the rows they show
// — the app itself, a second instance, the worker finishing a job, an operator (here: another connection) — the next
// view shows it, and one clinician's change never shows in another's list.

setupTestApp();

type FileRecord = { key: string; filename: string; transcriptionStatus: string; metadata: { display_name: string } };

async function files(cookie: string) {
  const response = await callRoute(filesLoader, request("/api/files", { cookie }));
  return ((await response.json()) as { files: FileRecord[] }).files;
}

async function workspaceRows(cookie: string) {
  const response = await callRoute(workspaceLoader, request("/", { cookie }));
  return ((await response.json()) as { recordings: Array<{ name: string; status: string }> }).recordings;
}

async function readyRecording(ownerId: string, stamp: string) {
  const key = `audio/${ownerId}/${stamp}-aufnahme.wav`;
  await getDb()
    .insertInto("recordings")
    .values({
      owner_id: ownerId,
      storage_key: key,
      original_filename: `${stamp}.wav`,
      language_code: "de-DE",
      upload_status: "ready",
    })
    .execute();
  return key;
}

describe("lists kept by an instance", () => {
  it("show a recording another connection added at the next view", async () => {
    const { cookie, user } = await signedInUser({ email: "liste@praxis.example" });
    await readyRecording(user.id, "20261129-080000");
    expect((await files(cookie)).map((f) => f.filename)).toEqual(["20261129-080000.wav"]);
    expect(await files(cookie)).toHaveLength(1);

    await fromAnotherConnection(
      `insert into recordings (owner_id, storage_key, original_filename, language_code, upload_status)
       values ($1, $2, 'spaeter.wav', 'de-DE', 'ready')`,
      [user.id, `audio/${user.id}/20261129-090000-spaeter.wav`],
    );
    expect((await files(cookie)).map((f) => f.filename).sort()).toEqual(["20261129-080000.wav", "spaeter.wav"]);
  });

  it("show a transcription the worker finished elsewhere, on the page and in the JSON list", async () => {
    const { cookie, user } = await signedInUser({ email: "status@praxis.example" });
    const key = await readyRecording(user.id, "20261129-100000");
    expect((await workspaceRows(cookie)).map((r) => r.status)).toEqual(["pending"]);
    expect((await files(cookie))[0].transcriptionStatus).toBe("pending");

    await fromAnotherConnection(
      "update recordings set transcription_status = 'completed', transcript_key = $2 where storage_key = $1",
      [key, `transcripts/${user.id}/x.json`],
    );
    expect((await workspaceRows(cookie)).map((r) => r.status)).toEqual(["completed"]);
    expect((await files(cookie))[0].transcriptionStatus).toBe("completed");
  });

  it("show the app's own change at once, and never one clinician's change in another's list", async () => {
    const anna = await signedInUser({ email: "anna@praxis.example" });
    const ben = await signedInUser({ email: "ben@praxis.example" });
    const key = await readyRecording(anna.user.id, "20261129-110000");
    await readyRecording(ben.user.id, "20261129-110000");
    const bensBefore = await files(ben.cookie);
    expect((await files(anna.cookie))[0].metadata.display_name).toBeNull();

    const renamed = await callRoute(
      renameAction,
      request("/api/rename-file", {
        method: "POST",
        cookie: anna.cookie,
        headers: { Origin: APP_URL, "Content-Type": "application/json" },
        body: JSON.stringify({ s3_key: key, display_name: "Frau Schmidt" }),
      }),
    );
    expect(renamed.status).toBe(200);
    expect((await files(anna.cookie))[0].metadata.display_name).toBe("Frau Schmidt");
    expect((await workspaceRows(anna.cookie))[0].name).toBe("Frau Schmidt");
    expect(await files(ben.cookie)).toEqual(bensBefore);
  });
});
