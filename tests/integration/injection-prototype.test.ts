import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import { recordingWithLetter, snapshotOf } from "../support/access-matrix-fixture";
import { browserFor, type Browser } from "../support/injection-world";
import { livePayload, segment, stop } from "../support/live-save";
import { serve } from "../support/remix-document";
import { APP_URL, request, setupTestApp, signedInUser } from "../setup/app";

// ASVS 15.3.6, prototype pollution: JSON bodies and form fields named __proto__, constructor and prototype, at the
// top level and nested (metadata, template elements, letter sections, tags, a live transcript's speaker labels),
// sent through the whole app to the JSON API and the screens' forms. Afterwards no object has gained a property,
// each request was answered as for any other name (saved literally, or refused with a 400, never a 500), and the
// other user's data is as it was.
const app = setupTestApp();

// What a careless merge (`Object.assign`, a deep merge, `target[key] = value`) would turn into a property of
// every object: the classic keys, at every level a body may be read.
const PROTO = `"__proto__": {"polluted": "yes", "isAdmin": true}, "constructor": {"prototype": {"polluted": "yes"}}, "prototype": {"polluted": "yes"}`;

// The built-in objects a pollution would reach, and the globals a `constructor` key would.
const BUILT_INS: Array<[string, object]> = [
  ["Object.prototype", Object.prototype],
  ["Array.prototype", Array.prototype],
  ["Function.prototype", Function.prototype],
  ["String.prototype", String.prototype],
  ["Object", Object],
  ["Array", Array],
];
const ownKeys = () => Object.fromEntries(BUILT_INS.map(([name, o]) => [name, Reflect.ownKeys(o).map(String).sort()]));

let pristine: ReturnType<typeof ownKeys>;
let anna: { userId: string; browser: Browser; key: string; letterParam: string };
let berta: { userId: string; before: Awaited<ReturnType<typeof snapshotOf>> };

function storageDir() {
  if (app.config.storage.kind !== "local") throw new Error("the snapshot reads the local store's files");
  return app.config.storage.directory;
}

const same = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };

/** A form post with the fields in this order (repeated and built-in names included). */
const formPost = (path: string, fields: Array<[string, string]>) =>
  serve(
    request(path, {
      method: "POST",
      cookie: anna.browser.cookie,
      headers: { ...same, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    }),
  );

/** A JSON body as an attacker writes it: raw text, so "__proto__" is a key and not JavaScript's prototype setter. */
const rawJson = (path: string, method: string, body: string) =>
  serve(
    request(path, {
      method,
      cookie: anna.browser.cookie,
      headers: { ...same, "Content-Type": "application/json" },
      body,
    }),
  );

function expectNoPollution() {
  const probe: Record<string, unknown> = {};
  expect(probe.polluted).toBeUndefined();
  expect(probe.isAdmin).toBeUndefined();
  expect((Object as unknown as Record<string, unknown>).total_segments).toBeUndefined();
  expect(ownKeys()).toEqual(pristine);
}

beforeAll(async () => {
  const a = await signedInUser({ email: "anna@praxis-proto.example" });
  const b = await signedInUser({ email: "berta@praxis-proto.example" });
  const words = (who: string) => ({
    fileName: `${who}.wav`,
    displayName: who,
    spoken: `${who} spricht`,
    letter: `${who} Befund`,
  });
  const annaLetter = await recordingWithLetter(a.user.id, words("Anna"));
  await recordingWithLetter(b.user.id, words("Berta"));
  anna = {
    userId: a.user.id,
    browser: await browserFor(a.cookie),
    key: annaLetter.sourceKey,
    letterParam: annaLetter.letterParam,
  };
  berta = { userId: b.user.id, before: await snapshotOf(b.user.id, storageDir()) };
  // Loads every route module first: whatever they set up on import is not a request's doing.
  await anna.browser.get("/");
  pristine = ownKeys();
}, 120_000);

afterEach(() => {
  // A failure must not spill into the next test: what a request added to a built-in is taken off again.
  for (const [name, target] of BUILT_INS)
    for (const key of Reflect.ownKeys(target))
      if (!pristine[name]!.includes(String(key))) delete (target as Record<PropertyKey, unknown>)[key];
});

async function recording() {
  return getDb()
    .selectFrom("recordings")
    .where("storage_key", "=", anna.key)
    .select(["display_name", "tags", "template_id"])
    .executeTakeFirstOrThrow();
}

describe("a JSON body with __proto__, constructor and prototype keys", () => {
  it("update-file-metadata: applies the metadata's own fields, the keys are ignored at both levels", async () => {
    const response = await rawJson(
      "/api/update-file-metadata",
      "POST",
      `{"s3_key": "${anna.key}", "metadata": {"display_name": "constructor", "tags": ["__proto__", "constructor", "prototype"], ${PROTO}}, ${PROTO}}`,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, key: anna.key });
    expectNoPollution();
    expect(await recording()).toMatchObject({
      display_name: "constructor",
      tags: ["__proto__", "constructor", "prototype"],
    });

    // Fields only under __proto__ are not the metadata's: nothing changes, however the body is read.
    const hidden = await rawJson(
      "/api/update-file-metadata",
      "POST",
      `{"s3_key": "${anna.key}", "metadata": {"__proto__": {"display_name": "Gekapert", "tags": ["x"]}}}`,
    );
    expect(hidden.status).toBe(200);
    expect(await recording()).toMatchObject({
      display_name: "constructor",
      tags: ["__proto__", "constructor", "prototype"],
    });
    expectNoPollution();
  });

  it("update-file-tags and rename-file: the names are tags and names like any other", async () => {
    const tags = await rawJson(
      "/api/update-file-tags",
      "POST",
      `{"s3_key": "${anna.key}", "tags": ["__proto__", "prototype"], "update_all_related": false, ${PROTO}}`,
    );
    expect(tags.status).toBe(200);
    const renamed = await rawJson(
      "/api/rename-file",
      "POST",
      `{"s3_key": "${anna.key}", "display_name": "__proto__", ${PROTO}}`,
    );
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toEqual({ success: true, display_name: "__proto__" });
    expectNoPollution();
    expect(await recording()).toMatchObject({ display_name: "__proto__", tags: ["__proto__", "prototype"] });
    // A template id that names a built-in is an unknown template (400), not Object's constructor.
    for (const id of ["constructor", "__proto__", "toString"]) {
      const answer = await rawJson(
        "/api/update-file-metadata",
        "POST",
        `{"s3_key": "${anna.key}", "metadata": {"template_id": "${id}"}}`,
      );
      expect(answer.status, id).toBe(400);
    }
    expect(await recording()).toMatchObject({ template_id: "soap" });
    expectNoPollution();
  });

  it("prompts: saved with the title as typed", async () => {
    const response = await rawJson(
      "/api/prompts",
      "POST",
      `{"title": "__proto__", "prompt_text": "constructor", ${PROTO}}`,
    );
    expect(response.status).toBe(201);
    expectNoPollution();
    const listed = await (await anna.browser.get("/api/prompts")).json();
    expect(listed.prompts).toEqual([expect.objectContaining({ title: "__proto__", prompt_text: "constructor" })]);
    expect(Object.keys(listed.prompts[0])).not.toContain("polluted");
  });

  it("structure/custom-template: a template called __proto__ with elements constructor and prototype", async () => {
    const response = await rawJson(
      "/api/structure/custom-template",
      "POST",
      `{"template_id": "constructor", "custom_name": "__proto__", "language_code": "de-DE", "prompt": "prototype",
        "structure_elements": [{"name": "constructor", "description": "prototype", ${PROTO}}, {"name": "prototype", "description": "__proto__"}],
        ${PROTO}}`,
    );
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ success: true, template_id: "constructor" });
    expectNoPollution();
    const structure = await (await anna.browser.get("/api/structure/user?template=constructor&language=de-DE")).json();
    expect(structure).toMatchObject({
      elements: [
        { id: "constructor", name: "constructor", description: "prototype" },
        { id: "prototype", name: "prototype", description: "__proto__" },
      ],
    });
    // Elements with a __proto__ list or object instead of the list are refused, not merged.
    const refused = await rawJson(
      "/api/structure/custom-template",
      "POST",
      `{"custom_name": "Zwei", "language_code": "de-DE", "structure_elements": {"__proto__": [{"name": "A", "description": "B"}]}}`,
    );
    expect(refused.status).toBe(400);
    expectNoPollution();
  });

  it("a letter's save: sections titled __proto__, constructor and prototype are kept as sections", async () => {
    const sections = `[{"__proto__": "Anamnese wie besprochen"}, {"constructor": "Befund"}, {"prototype": "Procedere"}]`;
    const response = await rawJson(
      `/api/arztbrief/${anna.letterParam}`,
      "PUT",
      `{"content": {"structured_output": ${sections}}, "base_version": 1, ${PROTO}}`,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, version: 2, changed: true });
    expectNoPollution();
    const letter = await (await anna.browser.get(`/api/arztbrief/${anna.letterParam}`)).json();
    // Read back as JSON text: each section is one own key with its text, none became a prototype.
    expect(letter.content.structured_output.map((s: object) => Object.entries(s))).toEqual([
      [["__proto__", "Anamnese wie besprochen"]],
      [["constructor", "Befund"]],
      [["prototype", "Procedere"]],
    ]);
    // The same keys beside structured_output are not content: refused with the reason.
    const extra = await rawJson(
      `/api/arztbrief/${anna.letterParam}`,
      "PUT",
      `{"content": {"structured_output": [{"Anamnese": "x"}], "__proto__": {"structured_output": []}}}`,
    );
    expect(extra.status).toBe(400);
    expect((await extra.json()).detail).toMatch(/^Validation error: /);
    expectNoPollution();
  });

  it("a live transcript whose speakers are labelled __proto__ and constructor", async () => {
    const payload = livePayload({
      transcript_data: {
        ...livePayload().transcript_data,
        results: [
          segment("Guten", 0, "__proto__", 0.97),
          segment("Tag", 0.5, "__proto__", 0.95),
          stop(0.9),
          segment("Mir", 1.2, "constructor", 0.92),
          segment("schwindelt", 1.7, "constructor", 0.9),
          stop(2.1),
        ],
      },
    });
    const body = JSON.stringify(payload).replace(/^\{/, `{${PROTO}, `);
    const response = await rawJson("/api/save-realtime-transcript", "POST", body);
    expect(response.status).toBe(200);
    expectNoPollution();
    const { transcript_key } = await response.json();
    const transcript = await (await anna.browser.get(`/api/transcript_v2/${transcript_key}`)).json();
    // Both speakers are counted as speakers (own keys of speakers_info), in order of appearance.
    expect(Object.keys(transcript.speakers_info)).toEqual(["__proto__", "constructor"]);
    expect(transcript.speakers_info.__proto__).toEqual({ total_segments: 1, total_duration: 0.9, first_appearance: 0 });
    expect(transcript.speakers_info.constructor).toMatchObject({ total_segments: 1, first_appearance: 1.2 });
  });
});

describe("form fields named __proto__, constructor and prototype", () => {
  it("a new template through the settings form: the names are data, the paths are ignored", async () => {
    const response = await anna.browser.form("/settings/new?language=en-GB", {
      name: "__proto__",
      "elements[0].name": "constructor",
      "elements[0].description": "prototype",
      "elements[1].name": "prototype",
      "elements[1].description": "__proto__",
      prompt: "constructor",
      "__proto__.polluted": "yes",
      "constructor.prototype.polluted": "yes",
      "elements[0].__proto__.polluted": "yes",
      "elements[1].constructor.prototype.polluted": "yes",
      "prototype.polluted": "yes",
    });
    expect(response.status).toBe(302);
    expectNoPollution();
    const saved = await getDb()
      .selectFrom("custom_templates")
      .where("owner_id", "=", anna.userId)
      .where("language_code", "=", "en-GB")
      .select(["name", "prompt", "elements"])
      .executeTakeFirstOrThrow();
    expect(saved).toMatchObject({ name: "__proto__", prompt: "constructor" });
    expect((saved.elements as Array<{ name: string }>).map((e) => e.name)).toEqual(["constructor", "prototype"]);
  });

  it("the letter editor's save: section titles __proto__ and constructor, and stray fields of those names", async () => {
    const response = await formPost(`/arztbriefe/${anna.letterParam}`, [
      ["intent", "save"],
      ["base_version", "2"],
      ["title", "__proto__"],
      ["text", "Erster Abschnitt"],
      ["title", "constructor"],
      ["text", "Zweiter Abschnitt"],
      ["__proto__", "yes"],
      ["constructor", "yes"],
      ["__proto__[polluted]", "yes"],
    ]);
    expect(response.status).toBe(302);
    expectNoPollution();
    const letter = await (await anna.browser.get(`/api/arztbrief/${anna.letterParam}`)).json();
    expect(letter.version).toBe(3);
    expect(letter.content.structured_output.map((s: object) => Object.entries(s))).toEqual([
      [["__proto__", "Erster Abschnitt"]],
      [["constructor", "Zweiter Abschnitt"]],
    ]);
  });

  it("the Audio page's intents and Settings › sessions: an intent named after a built-in is unknown (400)", async () => {
    for (const intent of ["__proto__", "constructor", "prototype", "toString"]) {
      const audio = await formPost("/?index", [
        ["intent", intent],
        ["key", anna.key],
        ["__proto__", "x"],
      ]);
      expect(audio.status, `audio ${intent}`).toBe(400);
      const sessions = await formPost("/settings/sessions", [
        ["intent", intent],
        ["session", "x"],
      ]);
      expect(sessions.status, `sessions ${intent}`).toBe(400);
    }
    // Object.fromEntries reads the sessions form: a __proto__ field is one more (ignored) field, not a prototype.
    const ended = await formPost("/settings/sessions", [
      ["__proto__", "x"],
      ["intent", "end"],
      ["session", "no-such-session"],
    ]);
    expect(ended.status).toBe(404);
    expectNoPollution();
  });
});

describe("the other user", () => {
  it("has everything as before: no row, no object of theirs was touched", async () => {
    expect(await snapshotOf(berta.userId, storageDir())).toEqual(berta.before);
  });
});
