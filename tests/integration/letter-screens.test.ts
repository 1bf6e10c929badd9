import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { I18nextProvider } from "react-i18next";
import { createStaticHandler, createStaticRouter, StaticRouterProvider } from "react-router-dom/server";
import { beforeAll, describe, expect, it } from "vitest";
import { insertLetter, insertProposal } from "~/models/letter.server";
import type { LetterStatus, StoredLetterContent } from "~/models/schema";
import EditorPage, { action as editorAction, loader as editorLoader } from "~/routes/_app.arztbriefe.$/route";
import RedoPage, { action as redoAction, loader as redoLoader } from "~/routes/_app.arztbriefe.redo.$";
import ListPage, { action as listAction, loader as listLoader } from "~/routes/_app.arztbriefe";
import ViewerPage, { action as viewerAction, loader as viewerLoader } from "~/routes/_app.transcriptions.$";
import TranscriptionsPage, {
  action as transcriptionsAction,
  loader as transcriptionsLoader,
} from "~/routes/_app.transcriptions";
import { getDb } from "~/services/db.server";
import { createI18n, languageCookie } from "~/services/i18n.server";
import { setLanguageModel } from "~/services/llm/engine.server";
import { makeStorageKey } from "~/services/storage.server";
import { letterJobOf, letterStatusOf, seedTranscribedRecording } from "../support/letter-fixtures";
import { ScriptedModel } from "../support/scripted-model";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The letter screens' server path (issue 6): the Arztbriefe list, the editor modal, the redo dialog and the
// letter parts of the Transcriptions screens, called with real requests against a real database and rendered
// to HTML the way the server renders them (no JavaScript). Letters are inserted through the models, so no
// language model is needed except for the one refinement that goes through the action.
setupTestApp();

type Fields = Record<string, string | string[]>;

let english = "";
beforeAll(async () => {
  english = (await languageCookie().serialize("en")).split(";")[0]!;
});

// The routes as Remix nests them under the workspace (the layout itself adds only the shell and the toast).
/* eslint-disable @typescript-eslint/no-explicit-any -- Remix loaders handed to React Router's static handler */
const routes = [
  {
    id: "routes/_app.arztbriefe",
    path: "/arztbriefe",
    loader: (a: any) => listLoader(a),
    action: (a: any) => listAction(a),
    Component: ListPage,
    children: [
      {
        id: "routes/_app.arztbriefe.redo.$",
        path: "redo/*",
        loader: (a: any) => redoLoader(a),
        action: (a: any) => redoAction(a),
        Component: RedoPage,
      },
      {
        id: "routes/_app.arztbriefe.$",
        path: "*",
        loader: (a: any) => editorLoader(a),
        action: (a: any) => editorAction(a),
        Component: EditorPage,
      },
    ],
  },
  {
    id: "routes/_app.transcriptions",
    path: "/transcriptions",
    loader: (a: any) => transcriptionsLoader(a),
    action: (a: any) => transcriptionsAction(a),
    Component: TranscriptionsPage,
    children: [
      {
        id: "routes/_app.transcriptions.$",
        path: "*",
        loader: (a: any) => viewerLoader(a),
        action: (a: any) => viewerAction(a),
        Component: ViewerPage,
      },
    ],
  },
];
/* eslint-enable @typescript-eslint/no-explicit-any */
// As remix.config.js's v3_relativeSplatPath: a form in a splat route posts to the whole URL.
const future = { v7_relativeSplatPath: true };
const handler = createStaticHandler(routes, { future });

/** A page as the server renders it: the redirect an action answers with, or the status and the HTML. */
async function page(path: string, cookie: string, fields?: Fields) {
  const req = request(path, { cookie: `${cookie}; ${english}`, ...(fields ? form(fields) : {}) });
  const context = await handler.query(req);
  if (context instanceof Response)
    return { status: context.status, location: context.headers.get("Location"), html: "" };
  const router = createStaticRouter(handler.dataRoutes, context, { future });
  const i18n = await createI18n("en");
  const html = renderToString(
    createElement(I18nextProvider, { i18n }, createElement(StaticRouterProvider, { router, context, hydrate: false })),
  );
  return { status: context.statusCode, location: null, html, context };
}

function form(fields: Fields) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields))
    for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
  return {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
    body: body.toString(),
  };
}

async function post(
  route: Parameters<typeof callRoute>[0],
  path: string,
  cookie: string,
  fields: Fields,
  params: Record<string, string> = {},
) {
  return callRoute(route, request(path, { cookie: `${cookie}; ${english}`, ...form(fields) }), params);
}

function toastOf(response: Response) {
  return response.headers.get("Set-Cookie") ?? "";
}

const LINES = [
  { speaker: "S1" as const, text: "Guten Tag, was führt Sie zu mir?" },
  { speaker: "S2" as const, text: "Seit drei Tagen habe ich Husten." },
];

const SOAP: StoredLetterContent = {
  structured_output: [
    { Anamnese: "Husten seit drei Tagen." },
    { Befund: "Lunge frei." },
    { Procedere: "Keine Informationen gefunden" },
  ],
};

async function seedLetter(
  ownerId: string,
  options: {
    content?: StoredLetterContent;
    status?: LetterStatus;
    templateId?: string | null;
    language?: string;
    displayName?: string;
  } = {},
) {
  const recording = await seedTranscribedRecording({
    ownerId,
    lines: LINES,
    templateId: options.templateId === undefined ? "soap" : options.templateId,
    fileName: "Visite.wav",
  });
  const key = makeStorageKey({ ownerId, area: "arztbriefe", extension: ".json" });
  await getDb()
    .transaction()
    .execute(async (trx) => {
      const letter = await insertLetter(trx, {
        ownerId,
        recordingId: recording.recordingId,
        key,
        templateId: options.templateId === undefined ? "soap" : (options.templateId ?? "soap"),
        language: options.language ?? "de-DE",
        tags: [],
      });
      await trx
        .insertInto("letter_versions")
        .values({
          letter_id: letter!.id,
          owner_id: ownerId,
          version: 1,
          kind: "generated",
          author_id: ownerId,
          template_id: "soap",
          content: JSON.stringify(options.content ?? SOAP),
        })
        .execute();
    });
  await getDb()
    .updateTable("recordings")
    .set({
      medical_letter_status: options.status ?? "completed",
      display_name: options.displayName ?? null,
      ...(options.templateId === null ? { template_id: null } : {}),
    })
    .where("id", "=", recording.recordingId)
    .execute();
  if (options.templateId === null) {
    await getDb().updateTable("letters").set({ template_id: null }).where("storage_key", "=", key).execute();
  }
  const path = key.replace(/^arztbriefe\//, "");
  return { ...recording, key, path, editor: `/arztbriefe/${path}` };
}

async function versionsOf(key: string) {
  return getDb()
    .selectFrom("letter_versions")
    .innerJoin("letters", "letters.id", "letter_versions.letter_id")
    .where("letters.storage_key", "=", key)
    .select(["letter_versions.version", "letter_versions.kind", "letter_versions.content"])
    .orderBy("letter_versions.version", "asc")
    .execute();
}

async function letterIdOf(key: string) {
  const row = await getDb().selectFrom("letters").where("storage_key", "=", key).select("id").executeTakeFirstOrThrow();
  return row.id;
}

function titlesAndTexts(content: StoredLetterContent) {
  const sections = typeof content === "string" ? [] : content.structured_output.map((s) => Object.entries(s)[0]!);
  return { title: sections.map(([t]) => t), text: sections.map(([, v]) => v) };
}

describe("the Arztbriefe list", () => {
  it("shows SPEC §4 status labels, the recording's name, a greyed processing row and a failed redo's reason", async () => {
    const { user, cookie } = await signedInUser({ email: "list@praxis.example" });
    const done = await seedLetter(user.id, { displayName: "Frau Becker" });
    const busy = await seedLetter(user.id, { status: "processing" });
    const redoFailed = await seedLetter(user.id);
    await getDb()
      .insertInto("letter_jobs")
      .values({
        owner_id: user.id,
        recording_id: redoFailed.recordingId,
        job_name: "letter-redo-failed",
        kind: "redo",
        template_id: "kurzbrief",
        status: "failed",
        error_key: "letters:errors.templateSwitchFailed",
        updated_at: new Date(),
      })
      .execute();
    const failed = await seedLetter(user.id, { status: "failed" });
    const structure = await seedLetter(user.id, { status: "structure_error" });
    const pending = await seedLetter(user.id, { status: "pending" });

    const { status, html } = await page("/arztbriefe", cookie);
    expect(status).toBe(200);
    const row = (key: string) => {
      const at = html.indexOf(`data-letter-row="${key}"`);
      return html.slice(html.lastIndexOf("<tr", at), html.indexOf("</tr>", at));
    };
    expect(row(done.key)).toContain("Frau Becker");
    expect(row(done.key)).toContain("Visite.wav");
    expect(row(done.key)).toContain("Document Created");
    expect(row(busy.key)).toMatch(/^<tr class="[^"]*opacity-60/);
    expect(row(busy.key)).toContain("Processing");
    expect(row(busy.key)).toContain("data-spinner");
    expect(row(busy.key)).toMatch(/<button[^>]*disabled=""[^>]*data-action="delete"/);
    expect(row(busy.key)).toMatch(/Recording #\d/);
    expect(row(redoFailed.key)).toContain("Document Created");
    expect(row(redoFailed.key)).toContain(
      "Template switch failed; this does not seem to be a structured document or dictation",
    );
    expect(row(failed.key)).toContain("Document creation error");
    expect(row(structure.key)).toContain("Invalid Document Structure");
    expect(row(pending.key)).toContain("Pending");
    expect(row(done.key)).toContain(`href="/arztbriefe/${done.path}"`);
    expect(row(done.key)).toContain(`href="/arztbriefe/redo/${done.path}"`);
    // Without JavaScript the list refreshes itself while something is processing.
    expect(html).toContain('<noscript><meta http-equiv="refresh" content="5"/></noscript>');
    // The same rows as cards for small screens.
    expect(html).toContain(`data-letter-card="${done.key}"`);
  });

  it("confirms a delete by saying what is lost, deletes the letter with its versions, and refuses while a job runs", async () => {
    const { user, cookie } = await signedInUser({ email: "delete@praxis.example" });
    const letter = await seedLetter(user.id);
    const confirm = await page(`/arztbriefe?delete=${encodeURIComponent(letter.key)}`, cookie);
    expect(confirm.html).toContain("data-confirm-delete");
    expect(confirm.html).toContain("The medical letter is deleted for good, with its only version.");
    expect(confirm.html).toContain("The recording and its transcript stay");
    // Not while processing (SPEC §4): a queued job makes the server refuse, and nothing is deleted.
    await getDb()
      .insertInto("letter_jobs")
      .values({
        owner_id: user.id,
        recording_id: letter.recordingId,
        job_name: "letter-busy",
        kind: "redo",
        template_id: "kurzbrief",
        status: "queued",
        updated_at: new Date(),
      })
      .execute();
    const refused = await post(listAction, "/arztbriefe", cookie, { intent: "delete", key: letter.key });
    expect(refused.status).toBe(409);
    expect((await refused.json()).error).toBe("The document is being created. Please wait until it is ready.");
    expect(await versionsOf(letter.key)).toHaveLength(1);
    await getDb().deleteFrom("letter_jobs").where("recording_id", "=", letter.recordingId).execute();

    const deleted = await post(listAction, "/arztbriefe", cookie, { intent: "delete", key: letter.key });
    expect(deleted.status).toBe(302);
    expect(toastOf(deleted)).toContain("skribent_toast");
    expect(await versionsOf(letter.key)).toHaveLength(0);
    expect((await letterStatusOf(letter.recordingId)).medical_letter_status).toBe("pending");
    const unknown = await post(listAction, "/arztbriefe", cookie, { intent: "nope" });
    expect(unknown.status).toBe(400);
  });
});

describe("the letter editor", () => {
  it("renders what the model wrote as text, never as markup", async () => {
    const { user, cookie } = await signedInUser({ email: "xss@praxis.example" });
    const letter = await seedLetter(user.id, {
      content: {
        structured_output: [
          { Anamnese: 'Husten <img src=x onerror=alert(1)> und "<script>alert(2)</script>"' },
          { "Befund <b>fett</b>": "Siehe [hier klicken](javascript:alert(3)) und **fett**" },
        ],
      },
    });
    for (const view of ["structured", "text"]) {
      const { status, html } = await page(`${letter.editor}?view=${view}`, cookie);
      expect(status).toBe(200);
      expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
      expect(html).toContain("&lt;script&gt;alert(2)&lt;/script&gt;");
      expect(html).toContain("[hier klicken](javascript:alert(3))");
      expect(html).not.toMatch(/<img|<script|<b>fett|href="javascript/i);
    }
  });

  it("saves a new version only when a section changed (CRLF from the browser counts as unchanged)", async () => {
    const { user, cookie } = await signedInUser({ email: "save@praxis.example" });
    const letter = await seedLetter(user.id, {
      content: { structured_output: [{ Anamnese: "Zeile eins\nZeile zwei" }, { Befund: "Lunge frei." }] },
    });
    const structured = await page(letter.editor, cookie);
    expect(structured.html).toContain('data-section="Anamnese"');
    expect(structured.html).toMatch(/<textarea[^>]*id="section-0"[^>]*name="text"/);
    expect(structured.html).toContain('data-action="save"');
    expect(structured.html).toContain('name="base_version" value="1"');

    const same = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "save",
        base_version: "1",
        title: ["Anamnese", "Befund"],
        text: ["Zeile eins\r\nZeile zwei", "Lunge frei."],
      },
      { "*": letter.path },
    );
    expect(same.status).toBe(302);
    expect(await versionsOf(letter.key)).toHaveLength(1);

    const changed = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "save",
        base_version: "1",
        title: ["Anamnese", "Befund"],
        text: ["Zeile eins\r\nZeile zwei", "Lunge frei, Herz rein."],
      },
      { "*": letter.path },
    );
    expect(changed.status).toBe(302);
    expect(changed.headers.get("Location")).toBe(letter.editor);
    const versions = await versionsOf(letter.key);
    expect(versions.map((v) => v.kind)).toEqual(["generated", "edited"]);
    expect(versions[1]!.content).toEqual({
      structured_output: [{ Anamnese: "Zeile eins\nZeile zwei" }, { Befund: "Lunge frei, Herz rein." }],
    });
  });

  it("keeps the doctor's typed text and says so when the letter changed in the meantime", async () => {
    const { user, cookie } = await signedInUser({ email: "stale@praxis.example" });
    const letter = await seedLetter(user.id);
    const { title, text } = titlesAndTexts(SOAP);
    // Another tab saved version 2.
    const first = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "save",
        base_version: "1",
        title,
        text: [text[0]!, "Lunge frei (anderer Tab).", text[2]!],
      },
      { "*": letter.path },
    );
    expect(first.status).toBe(302);
    const typed = "Mein getippter Befund, der nicht verloren gehen darf.";
    const stale = await page(letter.editor, cookie, {
      intent: "save",
      base_version: "1",
      title,
      text: [text[0]!, typed, text[2]!],
    });
    expect(stale.status).toBe(409);
    expect(stale.html).toContain("The document was changed in the meantime. Please reload it; nothing has been lost.");
    expect(stale.html).toContain(typed);
    expect(stale.html).toContain("data-dirty");
    // The next save is made from the current version: it is a deliberate overwrite, kept in the history.
    expect(stale.html).toContain('name="base_version" value="2"');
    expect(await versionsOf(letter.key)).toHaveLength(2);
  });

  it("shows the text view, whose copy leaves out 'no information found' sections in either language", async () => {
    const { user, cookie } = await signedInUser({ email: "text@praxis.example" });
    const letter = await seedLetter(user.id, {
      content: {
        structured_output: [
          { Anamnese: "Husten seit drei Tagen." },
          { Befund: "Keine Informationen gefunden" },
          { Medikation: "No information found." },
          { Procedere: "Röntgen Thorax." },
        ],
      },
    });
    const response = await callRoute(editorLoader, request(`${letter.editor}?view=text`, { cookie }), {
      "*": letter.path,
    });
    const data = await response.json();
    expect(data.view).toBe("text");
    expect(data.copyText).toBe("Anamnese\nHusten seit drei Tagen.\n\nProcedere\nRöntgen Thorax.");
    const { html } = await page(`${letter.editor}?view=text`, cookie);
    expect(html).toContain("data-letter-text");
    expect(html).toContain('data-copy-target="letter-copy-source"');
    // Shown to read, marked as not copied.
    expect(html).toMatch(/data-section="Befund" data-no-information=""/);
    expect(html).toContain("Not copied: no information found.");
  });

  it("remembers the view in a cookie, and opens plain-text letters in the text view only", async () => {
    const { user, cookie } = await signedInUser({ email: "view@praxis.example" });
    const letter = await seedLetter(user.id);
    const chosen = await callRoute(editorLoader, request(`${letter.editor}?view=text`, { cookie }), {
      "*": letter.path,
    });
    const setCookie = chosen.headers.get("Set-Cookie") ?? "";
    expect(setCookie).toMatch(/^skribent_letter_view=/);
    expect(setCookie).toContain("HttpOnly");
    const preference = setCookie.split(";")[0]!;
    const again = await (
      await callRoute(editorLoader, request(letter.editor, { cookie: `${cookie}; ${preference}` }), {
        "*": letter.path,
      })
    ).json();
    expect(again.view).toBe("text");
    const fresh = await (
      await callRoute(editorLoader, request(letter.editor, { cookie }), { "*": letter.path })
    ).json();
    expect(fresh.view).toBe("structured");

    const plain = await seedLetter(user.id, { content: "Sehr geehrte Kollegin,\nvielen Dank." });
    const plainData = await (
      await callRoute(editorLoader, request(`${plain.editor}?view=structured`, { cookie }), { "*": plain.path })
    ).json();
    expect(plainData.view).toBe("text");
    expect(plainData.plain).toBe(true);
    const { html } = await page(plain.editor, cookie);
    expect(html).not.toContain('data-action="view-structured"');
    expect(html).not.toContain("data-letter-form");
    expect(html).toContain("Sehr geehrte Kollegin,\nvielen Dank.");
  });

  it("says 'Missing language code for the document' instead of opening a letter without one", async () => {
    const { user, cookie } = await signedInUser({ email: "nolang@praxis.example" });
    const letter = await seedLetter(user.id, { language: "" });
    const { status, html } = await page(letter.editor, cookie);
    expect(status).toBe(200);
    expect(html).toContain("Missing language code for the document");
    expect(html).not.toContain("Husten seit drei Tagen.");
  });

  it("turns a proposal into a version on accept, creates none on reject, and only lets a stale one be rejected", async () => {
    const { user, cookie } = await signedInUser({ email: "proposal@praxis.example" });
    const letter = await seedLetter(user.id);
    const letterId = await letterIdOf(letter.key);
    const proposed: StoredLetterContent = {
      structured_output: [
        { Anamnese: "Husten seit drei Tagen, kein Fieber." },
        { Befund: "Lunge frei." },
        { Procedere: "Keine Informationen gefunden" },
      ],
    };
    const one = await insertProposal({
      ownerId: user.id,
      letterId,
      baseVersion: 1,
      scope: "section",
      sectionTitle: "Anamnese",
      query: "Fieber erwähnen",
      content: proposed,
    });
    const view = await page(`${letter.editor}?proposal=${one.id}`, cookie);
    expect(view.html).toContain(`data-proposal="${one.id}"`);
    expect(view.html).toMatch(/data-diff-section="Anamnese" data-change="changed"/);
    expect(view.html).toMatch(/<del[^>]*>Tagen\.<\/del><ins[^>]*>Tagen, kein Fieber\.<\/ins>/);
    expect(view.html).toContain('data-action="accept"');
    expect(view.html).toContain('data-action="reject"');

    const rejectedOne = await insertProposal({
      ownerId: user.id,
      letterId,
      baseVersion: 1,
      scope: "all",
      sectionTitle: null,
      query: "Alles kürzen",
      content: proposed,
    });
    const rejected = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "reject", proposalId: rejectedOne.id },
      {
        "*": letter.path,
      },
    );
    expect(rejected.status).toBe(302);
    expect(await versionsOf(letter.key)).toHaveLength(1);

    const accepted = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "accept", proposalId: one.id },
      {
        "*": letter.path,
      },
    );
    expect(accepted.status).toBe(302);
    const versions = await versionsOf(letter.key);
    expect(versions.map((v) => v.kind)).toEqual(["generated", "refined"]);
    expect(versions[1]!.content).toEqual(proposed);

    // A proposal made from version 1 is stale now: it can only be rejected.
    const late = await insertProposal({
      ownerId: user.id,
      letterId,
      baseVersion: 1,
      scope: "all",
      sectionTitle: null,
      query: "Spät",
      content: SOAP,
    });
    const stale = await page(`${letter.editor}?proposal=${late.id}`, cookie);
    expect(stale.html).toContain("data-stale");
    expect(stale.html).not.toContain('data-action="accept"');
    expect(stale.html).toContain('data-action="reject"');
    const forced = await page(`${letter.editor}?proposal=${late.id}`, cookie, {
      intent: "accept",
      proposalId: late.id,
    });
    expect(forced.status).toBe(409);
    expect(forced.html).toContain("The document was changed in the meantime");
    expect(await versionsOf(letter.key)).toHaveLength(2);
  });

  it("asks the model for a proposal on Update, and keeps an empty or refused instruction in the form", async () => {
    const { user, cookie } = await signedInUser({ email: "refine@praxis.example" });
    const letter = await seedLetter(user.id);
    const model = new ScriptedModel(() => ({ refined_text: "Husten seit drei Tagen, kein Fieber." }));
    setLanguageModel(model);
    try {
      const empty = await page(letter.editor, cookie, { intent: "refine", scope: "Anamnese", query: "  " });
      expect(empty.status).toBe(400);
      expect(empty.html).toContain("Please enter an instruction.");
      const unknownSection = await page(letter.editor, cookie, {
        intent: "refine",
        scope: "Gibt es nicht",
        query: "Kürzer, bitte",
      });
      expect(unknownSection.status).toBe(400);
      expect(unknownSection.html).toContain("Section not found");
      expect(unknownSection.html).toContain("Kürzer, bitte</textarea>");

      const asked = await post(
        editorAction,
        letter.editor,
        cookie,
        {
          intent: "refine",
          scope: "Anamnese",
          query: "Fieber erwähnen",
        },
        { "*": letter.path },
      );
      expect(asked.status).toBe(302);
      const location = asked.headers.get("Location")!;
      expect(location).toMatch(new RegExp(`^${letter.editor}\\?proposal=[0-9a-f-]{36}$`));
      expect(model.requests).toHaveLength(1);
      // A proposal is not a version.
      expect(await versionsOf(letter.key)).toHaveLength(1);
      const { html } = await page(location, cookie);
      expect(html).toMatch(/data-diff-section="Anamnese" data-change="changed"/);
      expect(html).toMatch(/data-diff-section="Befund" data-change="unchanged"/);
    } finally {
      setLanguageModel(undefined);
    }
  });

  it("lists the versions with their kind, compares one with the current version, and restores it as a new version", async () => {
    const { user, cookie } = await signedInUser({ email: "restore@praxis.example", name: "Dr. Restore" });
    const letter = await seedLetter(user.id);
    const { title, text } = titlesAndTexts(SOAP);
    await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "save",
        base_version: "1",
        title,
        text: [text[0]!, "Lunge: Giemen.", text[2]!],
      },
      { "*": letter.path },
    );
    const history = await page(`${letter.editor}?versions=1`, cookie);
    expect(history.html).toContain("data-versions");
    expect(history.html).toMatch(/data-version="2" data-kind="edited" data-current=""/);
    expect(history.html).toMatch(/data-version="1" data-kind="generated"/);
    expect(history.html).toContain("Dr. Restore");
    expect(history.html).toContain(`href="${letter.editor}?compare=1"`);

    const compare = await page(`${letter.editor}?compare=1`, cookie);
    expect(compare.html).toContain('data-compare="1"');
    expect(compare.html).toMatch(/<del[^>]*>Lunge frei\.<\/del><ins[^>]*>Lunge: Giemen\.<\/ins>/);

    const restored = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "restore", version: "1" },
      {
        "*": letter.path,
      },
    );
    expect(restored.status).toBe(302);
    expect(restored.headers.get("Location")).toBe(`${letter.editor}?versions=1`);
    const versions = await versionsOf(letter.key);
    expect(versions.map((v) => v.kind)).toEqual(["generated", "edited", "restored"]);
    expect(versions[2]!.content).toEqual(versions[0]!.content);
  });

  it("saves three prompts and refuses the fourth with SPEC's message; use and delete go through the server", async () => {
    const { user, cookie } = await signedInUser({ email: "prompts@praxis.example" });
    const letter = await seedLetter(user.id);
    for (const n of [1, 2, 3]) {
      const saved = await post(
        editorAction,
        letter.editor,
        cookie,
        {
          intent: "savePrompt",
          scope: "__all__",
          query: `Anweisung ${n}`,
          title: `Prompt ${n}`,
          promptText: "",
        },
        { "*": letter.path },
      );
      expect(saved.status).toBe(302);
    }
    const fourth = await page(letter.editor, cookie, {
      intent: "savePrompt",
      scope: "__all__",
      query: "Noch eine",
      title: "Prompt 4",
      promptText: "Noch eine",
    });
    expect(fourth.status).toBe(400);
    expect(fourth.html).toContain("Maximum 3 prompts allowed. Please delete one first.");
    expect(fourth.html).toMatch(/<button[^>]*disabled=""[^>]*data-action="save-prompt"/);
    const tooLong = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "savePrompt",
        query: "x",
        title: "t".repeat(41),
        promptText: "x",
      },
      { "*": letter.path },
    );
    expect((await tooLong.json()).promptError).toBe("The title may be at most 40 characters long.");

    const prompts = await getDb()
      .selectFrom("saved_prompts")
      .where("owner_id", "=", user.id)
      .select(["id", "prompt_text"])
      .orderBy("created_at", "asc")
      .execute();
    // Left empty, the prompt text is the instruction it was saved from.
    expect(prompts.map((p) => p.prompt_text)).toEqual(["Anweisung 1", "Anweisung 2", "Anweisung 3"]);
    const used = await page(letter.editor, cookie, { intent: "usePrompt", promptId: prompts[1]!.id, scope: "__all__" });
    expect(used.status).toBe(200);
    expect(used.html).toMatch(/<textarea[^>]*name="query"[^>]*>Anweisung 2<\/textarea>/);
    const removed = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "deletePrompt", promptId: prompts[0]!.id },
      {
        "*": letter.path,
      },
    );
    expect(removed.status).toBe(302);
    const titleMissing = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "savePrompt",
        query: "x",
        title: " ",
        promptText: "x",
      },
      { "*": letter.path },
    );
    expect((await titleMissing.json()).promptError).toBe("Title is required");
  });

  it("is a 404 with no content for another user's letter, on every route and intent", async () => {
    const owner = await signedInUser({ email: "owner@praxis.example" });
    const other = await signedInUser({ email: "other@praxis.example" });
    const letter = await seedLetter(owner.user.id, {
      content: { structured_output: [{ Anamnese: "Streng vertraulich." }] },
    });
    const read = await callRoute(editorLoader, request(letter.editor, { cookie: other.cookie }), { "*": letter.path });
    expect(read.status).toBe(404);
    expect(await read.text()).not.toContain("vertraulich");
    for (const intent of ["save", "refine", "accept", "restore", "savePrompt"]) {
      const response = await post(
        editorAction,
        letter.editor,
        other.cookie,
        { intent, title: "A", text: "x" },
        {
          "*": letter.path,
        },
      );
      expect(response.status, intent).toBe(404);
    }
    const redo = await callRoute(redoLoader, request(`/arztbriefe/redo/${letter.path}`, { cookie: other.cookie }), {
      "*": letter.path,
    });
    expect(redo.status).toBe(404);
    const confirm = await callRoute(
      listLoader,
      request(`/arztbriefe?delete=${encodeURIComponent(letter.key)}`, { cookie: other.cookie }),
    );
    expect(confirm.status).toBe(404);
    const remove = await post(listAction, "/arztbriefe", other.cookie, { intent: "delete", key: letter.key });
    expect(remove.status).toBe(404);
    expect(await versionsOf(letter.key)).toHaveLength(1);
    // Reads leave an audit row (who, what, outcome), never the content.
    const audits = await getDb().selectFrom("audit_events").where("user_id", "=", owner.user.id).selectAll().execute();
    expect(JSON.stringify(audits)).not.toContain("vertraulich");
  });
});

describe("redo with a different template", () => {
  it("offers the other templates of the letter's language, excludes the current one, and starts the job", async () => {
    const { user, cookie } = await signedInUser({ email: "redo@praxis.example" });
    const letter = await seedLetter(user.id);
    const dialog = await page(`/arztbriefe/redo/${letter.path}`, cookie);
    expect(dialog.status).toBe(200);
    expect(dialog.html).toContain('data-current-template="soap"');
    expect(dialog.html).not.toMatch(/name="templateId"[^>]*value="soap"/);
    expect(dialog.html).toMatch(/name="templateId"[^>]*value="kurzbrief"/);
    expect(dialog.html).toContain("The current text stays in the version history.");
    expect(dialog.html).not.toContain("additionalContext");

    const same = await page(`/arztbriefe/redo/${letter.path}`, cookie, { templateId: "soap" });
    expect(same.status).toBe(400);
    expect(same.html).toContain("Please choose a different template than the current one.");

    const started = await post(
      redoAction,
      `/arztbriefe/redo/${letter.path}`,
      cookie,
      { templateId: "kurzbrief" },
      {
        "*": letter.path,
      },
    );
    expect(started.status).toBe(302);
    expect(started.headers.get("Location")).toBe("/arztbriefe");
    expect((await letterStatusOf(letter.recordingId)).medical_letter_status).toBe("processing");
    expect((await letterJobOf(letter.recordingId))?.kind).toBe("redo");
    // Busy: the editor is read-only and the list row greyed.
    const editor = await page(letter.editor, cookie);
    expect(editor.html).toContain("data-letter-busy");
    expect(editor.html).not.toContain('data-action="save"');
    const refused = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "save",
        base_version: "1",
        ...titlesAndTexts(SOAP),
      },
      { "*": letter.path },
    );
    expect(refused.status).toBe(409);
  });

  it("says 'Template information missing for redo' when the template is unknown", async () => {
    const { user, cookie } = await signedInUser({ email: "notemplate@praxis.example" });
    const letter = await seedLetter(user.id, { templateId: null });
    const dialog = await page(`/arztbriefe/redo/${letter.path}`, cookie);
    expect(dialog.html).toContain("Template information missing for redo");
    expect(dialog.html).not.toContain('name="templateId"');
    expect(dialog.html).toContain("data-problem");
    const posted = await post(
      redoAction,
      `/arztbriefe/redo/${letter.path}`,
      cookie,
      { templateId: "kurzbrief" },
      {
        "*": letter.path,
      },
    );
    expect(posted.status).toBe(400);
    expect((await posted.json()).error).toBe("Template information missing for redo");
  });
});

describe("letters on the Transcriptions screens", () => {
  it("shows the letter status, creates a letter once, links to an existing one, and gives the not-a-patient notice", async () => {
    const { user, cookie } = await signedInUser({ email: "transcripts@praxis.example" });
    const fresh = await seedTranscribedRecording({ ownerId: user.id, lines: LINES, templateId: "soap" });
    const withLetter = await seedLetter(user.id);
    const notPatient = await seedTranscribedRecording({ ownerId: user.id, lines: LINES, templateId: "soap" });
    await getDb()
      .updateTable("recordings")
      .set({ medical_letter_status: "failed" })
      .where("id", "=", notPatient.recordingId)
      .execute();
    await getDb()
      .insertInto("letter_jobs")
      .values({
        owner_id: user.id,
        recording_id: notPatient.recordingId,
        job_name: "letter-not-patient",
        kind: "create",
        template_id: "soap",
        status: "failed",
        error_key: "letters:errors.notPatientConversation",
        updated_at: new Date(),
      })
      .execute();

    const list = await page("/transcriptions", cookie);
    expect(list.html).toContain("Letter status");
    expect(list.html).toContain(`href="/arztbriefe/${withLetter.path}"`);
    expect(list.html).toContain("Document Created");
    expect(list.html).toContain("This recording contains neither a patient conversation nor a doctor dictation");
    expect(list.html).toContain(`name="key" value="${fresh.sourceKey}"`);

    const created = await post(transcriptionsAction, "/transcriptions", cookie, {
      intent: "createLetter",
      key: fresh.sourceKey,
    });
    expect(created.status).toBe(302);
    expect(created.headers.get("Location")).toBe("/transcriptions");
    expect((await letterStatusOf(fresh.recordingId)).medical_letter_status).toBe("processing");
    const job = await letterJobOf(fresh.recordingId);
    expect(job?.kind).toBe("create");
    // A second click starts nothing new.
    await post(transcriptionsAction, "/transcriptions", cookie, { intent: "createLetter", key: fresh.sourceKey });
    expect((await letterJobOf(fresh.recordingId))?.id).toBe(job?.id);

    const refreshed = await page("/transcriptions", cookie);
    expect(refreshed.html).toContain('data-letter-status="processing"');
    expect(refreshed.html).toMatch(/<button[^>]*disabled=""[^>]*data-action="create-letter"/);
    expect(refreshed.html).toContain('<noscript><meta http-equiv="refresh" content="5"/></noscript>');

    // The viewer offers "Create document" for the not-a-patient recording and the way to an existing letter.
    const viewerPath = `/transcriptions/${notPatient.transcriptKey.replace(/^transcripts\//, "")}`;
    const viewer = await page(viewerPath, cookie);
    expect(viewer.html).toContain("data-viewer-letter");
    expect(viewer.html).toContain("Create document");
    expect(viewer.html).toContain("This recording contains neither a patient conversation nor a doctor dictation");
    const again = await post(
      viewerAction,
      viewerPath,
      cookie,
      { intent: "createLetter" },
      { "*": notPatient.transcriptKey.replace(/^transcripts\//, "") },
    );
    expect(again.status).toBe(302);
    expect(again.headers.get("Location")).toBe(viewerPath);
    const letterViewer = await page(
      `/transcriptions/${withLetter.transcriptKey.replace(/^transcripts\//, "")}`,
      cookie,
    );
    expect(letterViewer.html).toContain(`href="/arztbriefe/${withLetter.path}"`);
    expect(letterViewer.html).toContain('data-action="open-letter"');
  });
});
