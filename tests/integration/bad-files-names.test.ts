import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action as audioAction } from "~/routes/_app._index/route";
import { loader as filesLoader } from "~/routes/api.files";
import { action as renameAction } from "~/routes/api.rename-file";
import { action as tagsAction } from "~/routes/api.update-file-tags";
import { getDb } from "~/models/db.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { audioPage, escaped, multipartUpload, presignedUpload, storedState } from "../support/bad-file-doors";
import { HOSTILE_NAMES, serverKeyPattern } from "../support/bad-file-fixtures";
import { userIdOf } from "../support/letter-fixtures";
import { toneWav } from "../support/wav";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Hostile file names (SPEC §5 "Names and tags", Reading A): an accepted upload is stored under a key of the
// server's making whatever its name, the name is kept only as a display text — no path, no control or bidi
// characters, at most 100 characters — and the page shows it escaped. A display name the SPEC forbids gets its
// message.
const app = setupTestApp({ provider: true });
const UNREADABLE_NAME_DE =
  "Der Dateiname kann nicht gelesen werden. Bitte benennen Sie die Datei ohne „;“ oder „=“ um und versuchen Sie es erneut.";
const wav = toneWav(1);
let anna: ApiClient;
let annaId: string;

beforeAll(async () => {
  anna = await apiClientFor(app.issuer, "anna-berger");
  await callRoute(filesLoader, anna("/api/files"));
  annaId = await userIdOf("anna-berger");
});
afterAll(async () => {
  await getDb().deleteFrom("recordings").execute();
});

async function keptName(key: string) {
  const row = await getDb()
    .selectFrom("recordings")
    .where("storage_key", "=", key)
    .select(["owner_id", "original_filename", "upload_status"])
    .executeTakeFirstOrThrow();
  expect(row.upload_status).toBe("ready");
  expect(key).toMatch(serverKeyPattern(row.owner_id));
  return row.original_filename;
}

describe("hostile names on an accepted upload", () => {
  it.each(HOSTILE_NAMES)("through get-upload-url and the resumable upload: $label", async ({ name, shown }) => {
    const single = await presignedUpload(anna, { name, type: "audio/wav", bytes: wav });
    expect(single.status).toBe(200);
    expect(await keptName(single.key!)).toBe(shown);
    const parts = await multipartUpload(anna, { name, type: "audio/wav", bytes: wav });
    expect(parts.status).toBe(200);
    expect(await keptName(parts.key!)).toBe(shown);
    const { files } = await (await callRoute(filesLoader, anna("/api/files"))).json();
    expect(files.find((f: { key: string }) => f.key === single.key).filename).toBe(shown);
  });

  it.each(HOSTILE_NAMES)("through the form, as a browser encodes it: $label", async ({ name, formShown, shown }) => {
    const index = HOSTILE_NAMES.findIndex((n) => n.name === name);
    const { cookie, user } = await signedInUser({ email: `names-${index}@praxis.example` });
    const form = new FormData();
    form.set("audio", new Blob([new Uint8Array(wav)], { type: "audio/wav" }), name);
    const posted = request("/?index", {
      method: "POST",
      cookie,
      headers: { "Sec-Fetch-Site": "same-origin" },
      body: form,
    });
    const response = await callRoute(audioAction, posted);
    const rows = await getDb().selectFrom("recordings").where("owner_id", "=", user.id).select("storage_key").execute();
    if (formShown === null) {
      // Not a 500: the user hears why, and nothing is stored.
      expect(response.status).toBe(400);
      expect((await response.json()).error).toBe(UNREADABLE_NAME_DE);
      expect(rows).toEqual([]);
      expect((await storedState(user.id)).objects).toEqual([]);
      return;
    }
    expect(response.status).toBe(302);
    const kept = await keptName(rows[0]!.storage_key);
    expect(kept).toBe(formShown ?? shown);
    const page = await audioPage(cookie);
    expect(page.html).toContain(`>${escaped(kept)}<`);
    expect(page.html).not.toContain("<img src=x");
    expect(page.html).not.toContain("\u202E");
  });
});

describe("display names the SPEC forbids", () => {
  async function rename(key: string, displayName: string) {
    const response = await callRoute(
      renameAction,
      anna("/api/rename-file", { method: "POST", json: { s3_key: key, display_name: displayName } }),
    );
    return { status: response.status, body: await response.json() };
  }

  it("are refused with the Reading A message; control and bidi characters never reach the row", async () => {
    const { key } = await presignedUpload(anna, { name: "umbenennen.wav", type: "audio/wav", bytes: wav });
    const before = await storedState(annaId);
    for (const [name, detail] of [
      ["a".repeat(1000), "Text must be 100 characters or less"],
      ["   ", "Text cannot be empty"],
      ["\u0000\r\n\u202E", "Text cannot be empty"],
    ] as const) {
      expect(await rename(key!, name)).toEqual({ status: 400, body: { detail } });
    }
    expect(await storedState(annaId)).toEqual(before);
    for (const [name, kept] of [
      ["Herr Müller\r\nKontrolle", "Herr Müller Kontrolle"],
      ["Dr.\u0000Weber", "Dr. Weber"],
      ["Befund\u202Efdp.exe", "Befundfdp.exe"],
      ['<script>alert("x")</script>', '<script>alert("x")</script>'],
      ["../../etc/passwd", "../../etc/passwd"],
    ] as const) {
      expect(await rename(key!, name)).toEqual({ status: 200, body: { success: true, display_name: kept } });
    }
    // Tags are names too: the same characters would otherwise reach a jsonb column that cannot hold NUL.
    const tags = await callRoute(
      tagsAction,
      anna("/api/update-file-tags", { method: "POST", json: { s3_key: key, tags: ["Kar\u0000dio", "\u202Eneu"] } }),
    );
    expect(await tags.json()).toEqual({ success: true, tags: ["Kar dio", "neu"] });
  });
});
