import { describe, expect, it } from "vitest";
import { action as editorAction, loader as editorLoader } from "~/routes/_app.arztbriefe.$/route";
import { loader as redoLoader } from "~/routes/_app.arztbriefe.redo.$";
import { action as listAction, loader as listLoader } from "~/routes/_app.arztbriefe/route";
import { getDb } from "~/models/db.server";
import { page, post, seedLetter, SOAP, titlesAndTexts, versionsOf } from "../support/letter-screens";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The letter editor's server path (issue 6): what it renders and how it saves — text never markup, a version only for a
// real change, a stale save that keeps the typed text, the text view and its copy, the remembered view, a letter
// without a language — and that another user's letter is a 404 on every route. Called with real requests against a real
// database and rendered to HTML the way the server renders them (no JavaScript); letters are inserted through the
// models (tests/support/letter-screens.ts), so no language model is needed. Proposals, versions and saved prompts:
// letter-screens-revisions.test.ts.
setupTestApp();

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
