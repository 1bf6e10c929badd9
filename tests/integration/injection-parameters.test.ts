import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import { startSession } from "~/services/web/session.server";
import { recordingWithLetter, snapshotOf } from "../support/access-matrix-fixture";
import { browserFor, type Browser } from "../support/injection-world";
import { seedTranscribedRecording } from "../support/letter-fixtures";
import { serve } from "../support/remix-document";
import { toneWav } from "../support/wav";
import { APP_URL, request, setupTestApp, signedInUser } from "../setup/app";

// ASVS 15.3.7, HTTP parameter pollution: a field sent twice — one value the user's own, one the other user's —
// in a form, a query string or a JSON body. Each handler reads one defined value (a form's and a query's first,
// JSON.parse's last), and whichever it is, the ownership check
// runs on that very value: the other user's recording, letter, template and session stay as they were, and the
// answer is a 404 or an action on the user's own object only.
const app = setupTestApp();

const same = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };

type Mine = { userId: string; cookie: string; browser: Browser };
let anna: Mine & { keys: string[]; letterKey: string };
let berta: Mine & { key: string; letterKey: string; templateId: string; onlyHers: string; sessionId: string };
let bertaBefore: Awaited<ReturnType<typeof snapshotOf>>;

function storageDir() {
  if (app.config.storage.kind !== "local") throw new Error("the snapshot reads the local store's files");
  return app.config.storage.directory;
}

const send = (cookie: string, path: string, method: string, fields: Array<[string, string]>) =>
  serve(
    request(path, {
      method,
      cookie,
      headers: { ...same, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    }),
  );
const annaForm = (path: string, fields: Array<[string, string]>) => send(anna.cookie, path, "POST", fields);
const annaJson = (path: string, method: string, body?: string) =>
  serve(request(path, { method, cookie: anna.cookie, headers: { ...same, "Content-Type": "application/json" }, body }));

async function recordingOf(key: string) {
  return getDb()
    .selectFrom("recordings")
    .where("storage_key", "=", key)
    .select(["owner_id", "display_name", "template_id", "language_code"])
    .executeTakeFirst();
}

async function publicIdsOf(userId: string) {
  const rows = await getDb()
    .selectFrom("sessions")
    .where("user_id", "=", userId)
    .select("public_id")
    .orderBy("created_at")
    .execute();
  return rows.map((r) => r.public_id);
}

async function expectBertaUntouched() {
  expect(await snapshotOf(berta.userId, storageDir())).toEqual(bertaBefore);
}

beforeAll(async () => {
  const a = await signedInUser({ email: "anna@praxis-hpp.example" });
  const b = await signedInUser({ email: "berta@praxis-hpp.example" });
  const lines = [{ speaker: "S1" as const, text: "Guten Tag" }];
  const annaLetter = await recordingWithLetter(a.user.id, {
    fileName: "anna.wav",
    displayName: "Anna eins",
    spoken: "Husten",
    letter: "Husten.",
  });
  const annaSecond = await seedTranscribedRecording({ ownerId: a.user.id, lines, fileName: "anna-zwei.wav" });
  const bertaLetter = await recordingWithLetter(b.user.id, {
    fileName: "berta.wav",
    displayName: "Bertas Sprechstunde",
    spoken: "Fieber",
    letter: "Fieber.",
  });
  anna = {
    userId: a.user.id,
    cookie: a.cookie,
    browser: await browserFor(a.cookie),
    keys: [annaLetter.sourceKey, annaSecond.sourceKey],
    letterKey: annaLetter.letterKey,
  };
  const bertaBrowser = await browserFor(b.cookie);
  const template = await bertaBrowser.json("/api/structure/custom-template", "POST", {
    template_id: "bertas-vorlage",
    custom_name: "Bertas Vorlage",
    language_code: "de-DE",
    structure_elements: [{ name: "Befund", description: "Der Befund" }],
  });
  expect(template.status).toBe(201);
  const onlyHers = await bertaBrowser.json("/api/structure/custom-template", "POST", {
    template_id: "bertas-eigene",
    custom_name: "Nur Bertas",
    language_code: "de-DE",
    structure_elements: [{ name: "Befund", description: "Der Befund" }],
  });
  expect(onlyHers.status).toBe(201);
  // Anna has a template of the same id: a repeated template_id must not reach Berta's through hers.
  const own = await anna.browser.json("/api/structure/custom-template", "POST", {
    template_id: "bertas-vorlage",
    custom_name: "Annas Vorlage",
    language_code: "de-DE",
    structure_elements: [{ name: "Befund", description: "Annas Befund" }],
  });
  expect(own.status).toBe(201);
  // A second session of Anna's (another browser), which she may end from Settings › sessions.
  await startSession({ userId: a.user.id, idToken: null });
  berta = {
    userId: b.user.id,
    cookie: b.cookie,
    browser: bertaBrowser,
    key: bertaLetter.sourceKey,
    letterKey: bertaLetter.letterKey,
    templateId: "bertas-vorlage",
    onlyHers: "bertas-eigene",
    sessionId: (await publicIdsOf(b.user.id))[0]!,
  };
  bertaBefore = await snapshotOf(b.user.id, storageDir());
}, 120_000);

describe("a form field sent twice on the Audio page", () => {
  it("rename with key=<Berta's>&key=<mine>: the first key is the one checked, a 404, nothing renamed", async () => {
    const response = await annaForm("/?index", [
      ["intent", "rename"],
      ["key", berta.key],
      ["key", anna.keys[1]!],
      ["displayName", "Gekapert"],
    ]);
    expect(response.status).toBe(404);
    expect(await recordingOf(anna.keys[1]!)).toMatchObject({ display_name: null });
    await expectBertaUntouched();
  });

  it("rename with key=<mine>&key=<Berta's> and two names: mine gets the first name, Berta's is untouched", async () => {
    const response = await annaForm("/?index", [
      ["intent", "rename"],
      ["key", anna.keys[1]!],
      ["key", berta.key],
      ["displayName", "Neu"],
      ["displayName", "Gekapert"],
    ]);
    expect(response.status).toBe(302);
    expect(await recordingOf(anna.keys[1]!)).toMatchObject({ owner_id: anna.userId, display_name: "Neu" });
    await expectBertaUntouched();
  });

  it("delete with key=<Berta's>&key=<mine>: a 404 and both recordings remain", async () => {
    const response = await annaForm("/?index", [
      ["intent", "delete"],
      ["key", berta.key],
      ["key", anna.keys[1]!],
    ]);
    expect(response.status).toBe(404);
    expect(await recordingOf(anna.keys[1]!)).toBeDefined();
    await expectBertaUntouched();
  });

  it("intent=rename&intent=delete: only the first intent runs", async () => {
    const response = await annaForm("/?index", [
      ["intent", "rename"],
      ["intent", "delete"],
      ["key", anna.keys[1]!],
      ["displayName", "Umbenannt, nicht gelöscht"],
    ]);
    expect(response.status).toBe(302);
    expect(await recordingOf(anna.keys[1]!)).toMatchObject({ display_name: "Umbenannt, nicht gelöscht" });
  });

  it("delete with key=<mine>&key=<Berta's>: mine is deleted, Berta's remains", async () => {
    const response = await annaForm("/?index", [
      ["intent", "delete"],
      ["key", anna.keys[1]!],
      ["key", berta.key],
    ]);
    expect(response.status).toBe(302);
    expect(await recordingOf(anna.keys[1]!)).toBeUndefined();
    expect(await recordingOf(berta.key)).toMatchObject({ owner_id: berta.userId });
    await expectBertaUntouched();
  });

  it("a dialog's key twice in the query: Berta's first is a 404, mine first shows only mine", async () => {
    const theirs = await anna.browser.get(
      `/?delete=${encodeURIComponent(berta.key)}&delete=${encodeURIComponent(anna.keys[0]!)}`,
    );
    expect(theirs.status).toBe(404);
    expect(await theirs.text()).not.toContain("Bertas Sprechstunde");
    const mine = await anna.browser.get(
      `/?edit=${encodeURIComponent(anna.keys[0]!)}&edit=${encodeURIComponent(berta.key)}`,
    );
    expect(mine.status).toBe(200);
    const html = await mine.text();
    expect(html).toContain("Anna eins");
    expect(html).not.toContain("Bertas Sprechstunde");
  });

  it("an upload with templateId and language twice: the first of each, and Berta's template is never used", async () => {
    const upload = (templateIds: string[], languages: string[]) => {
      const form = new FormData();
      form.append("audio", new File([new Uint8Array(toneWav(1))], "doppelt.wav", { type: "audio/wav" }));
      for (const id of templateIds) form.append("templateId", id);
      for (const language of languages) form.append("language", language);
      form.append("mode", "transcript");
      return anna.browser.multipart("/?index", form);
    };
    const count = async () =>
      (await getDb().selectFrom("recordings").where("owner_id", "=", anna.userId).select("storage_key").execute())
        .length;
    const before = await count();
    // Berta's template first: not one Anna can use, refused, nothing stored.
    const refused = await upload([berta.onlyHers, "soap"], ["de", "en"]);
    expect(refused.status).toBe(400);
    expect(await count()).toBe(before);
    const accepted = await upload(["soap", berta.onlyHers], ["en", "de"]);
    expect(accepted.status).toBe(302);
    const row = await getDb()
      .selectFrom("recordings")
      .where("owner_id", "=", anna.userId)
      .where("original_filename", "=", "doppelt.wav")
      .select(["template_id", "language_code"])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ template_id: "soap", language_code: "en-GB" });
    await expectBertaUntouched();
  });
});

describe("a query parameter sent twice to the JSON API", () => {
  it("DELETE custom-template: the first template_id and language_code, only ever among Anna's own", async () => {
    const templates = async (userId: string) =>
      (
        await getDb()
          .selectFrom("custom_templates")
          .where("owner_id", "=", userId)
          .select(["template_id", "language_code", "name"])
          .execute()
      ).map((t) => `${t.template_id}/${t.language_code}/${t.name}`);
    // Anna has no English template of that id: the first language decides, a 404.
    const english = await annaJson(
      `/api/structure/custom-template?template_id=${berta.templateId}&template_id=x&language_code=en&language_code=de-DE`,
      "DELETE",
    );
    expect(english.status).toBe(404);
    expect(await templates(anna.userId)).toEqual(["bertas-vorlage/de-DE/Annas Vorlage"]);
    // An unknown first id: a 404 even when the second is one of Anna's.
    const unknown = await annaJson(
      `/api/structure/custom-template?template_id=no-such&template_id=${berta.templateId}&language_code=de-DE`,
      "DELETE",
    );
    expect(unknown.status).toBe(404);
    expect(await templates(anna.userId)).toEqual(["bertas-vorlage/de-DE/Annas Vorlage"]);
    // The same id as Berta's, in German: Anna's own is deleted, Berta's is not.
    const deleted = await annaJson(
      `/api/structure/custom-template?template_id=${berta.templateId}&template_id=no-such&language_code=de-DE&language_code=en`,
      "DELETE",
    );
    expect(deleted.status).toBe(200);
    expect(await templates(anna.userId)).toEqual([]);
    expect(await templates(berta.userId)).toEqual(
      expect.arrayContaining(["bertas-vorlage/de-DE/Bertas Vorlage", "bertas-eigene/de-DE/Nur Bertas"]),
    );
    await expectBertaUntouched();
  });
});

describe("a JSON key sent twice", () => {
  it("delete-arztbrief and rename-file: JSON.parse keeps the last, and Berta's as the last is a 404", async () => {
    const letterParam = (key: string) => key.replace(/^arztbriefe\//, "");
    const hers = await annaJson(
      "/api/delete-arztbrief",
      "POST",
      `{"key": "${anna.letterKey}", "key": "${berta.letterKey}"}`,
    );
    expect(hers.status).toBe(404);
    const renamed = await annaJson(
      "/api/rename-file",
      "POST",
      `{"s3_key": "${anna.keys[0]}", "s3_key": "${berta.key}", "display_name": "Gekapert"}`,
    );
    expect(renamed.status).toBe(404);
    // Berta's side is read from the database (a request of hers would move her session's last-seen time).
    await expectBertaUntouched();
    const mine = await annaJson(
      "/api/delete-arztbrief",
      "POST",
      `{"key": "${berta.letterKey}", "key": "${anna.letterKey}"}`,
    );
    expect(mine.status).toBe(200);
    expect((await anna.browser.get(`/api/arztbrief/${letterParam(anna.letterKey)}`)).status).toBe(404);
    await expectBertaUntouched();
  });
});

describe("Settings › sessions with the session field twice", () => {
  it("never ends Berta's session: the first value is the one checked, as in every form", async () => {
    const [, annaOther] = await publicIdsOf(anna.userId);
    expect(annaOther).toBeDefined();
    const hersFirst = await annaForm("/settings/sessions", [
      ["intent", "end"],
      ["session", berta.sessionId],
      ["session", annaOther!],
    ]);
    expect(hersFirst.status).toBe(404);
    expect(await publicIdsOf(anna.userId)).toHaveLength(2);
    const mineFirst = await annaForm("/settings/sessions", [
      ["intent", "end"],
      ["session", annaOther!],
      ["session", berta.sessionId],
    ]);
    expect(mineFirst.status).toBe(302);
    expect(await publicIdsOf(anna.userId)).not.toContain(annaOther);
    expect(await publicIdsOf(berta.userId)).toEqual([berta.sessionId]);
    await expectBertaUntouched();
  });
});
