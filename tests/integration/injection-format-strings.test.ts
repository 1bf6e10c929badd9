import { beforeAll, describe, expect, it } from "vitest";
import { languageCookie } from "~/services/web/i18n.server";
import { recordingWithLetter } from "../support/access-matrix-fixture";
import { setupChatModel } from "../support/chat-fixtures";
import { escapeHtml } from "../support/injection-payloads";
import { browserFor, type Browser } from "../support/injection-world";
import { serve } from "../support/remix-document";
import { APP_URL, request, setupTestApp, signedInUser } from "../setup/app";

// ASVS 1.3.10, format strings: names, tags, file names and MIME types that look like i18next's interpolation
// ({{name}}, {{-name}} unescaped), its nesting ($t(other:key)) or printf (%s, %d) reach translated messages — the
// dialog titles and tag buttons that quote a recording's name, the settings dialogs that quote a template's, the
// top bar that quotes the user's, and the refusals that quote an upload's type or a PDF's file name. Each one is
// shown exactly as typed: nothing is substituted, no other message is pulled in.
setupTestApp();
setupChatModel();

// Every form at once; 100 characters at most (a display name's limit). No quotes or angle brackets, so the text
// React writes is the text itself. A tag holds 50 characters.
const FORMAT = "{{name}} {{-name}} {{error}} $t(common:errors.unavailable) %s %d";
const TAG = "{{-tag}} $t(common:errors.unavailable) %s";
// What $t(common:errors.unavailable) would become if it were expanded, in either language.
const EXPANDED = [/Skribent cannot reach its data/, /Skribent kann seine Daten/];

let browser: Browser;
let english: string;
let key: string;
let letterParam: string;
let templateId: string;

const same = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };

/** A page in English, as the browser gets it. */
async function page(path: string) {
  const response = await serve(request(path, { cookie: english }));
  return { status: response.status, html: await response.text() };
}

function expectLiteral(html: string, ...shown: string[]) {
  for (const text of shown) expect(html).toContain(escapeHtml(text));
  for (const pattern of EXPANDED) expect(html).not.toMatch(pattern);
}

beforeAll(async () => {
  const { user, cookie } = await signedInUser({ email: "format@praxis-format.example", name: FORMAT });
  english = `${cookie}; ${(await languageCookie().serialize("en")).split(";")[0]}`;
  browser = await browserFor(cookie);
  const letter = await recordingWithLetter(user.id, {
    fileName: "sprechstunde.wav",
    displayName: "Vorher",
    spoken: "Husten",
    letter: "Husten seit Tagen.",
  });
  ({ sourceKey: key, letterParam } = letter);
  // The name and the tag through the Audio page's own forms, as a clinician types them.
  expect((await browser.form("/?index", { intent: "rename", key, displayName: FORMAT })).status).toBe(302);
  expect((await browser.form("/?index", { intent: "add-tag", key, tag: TAG })).status).toBe(302);
  const template = await browser.json("/api/structure/custom-template", "POST", {
    custom_name: FORMAT,
    language_code: "de-DE",
    structure_elements: [{ name: "Befund", description: "%s {{x}}" }],
  });
  expect(template.status).toBe(201);
  ({ template_id: templateId } = await template.json());
}, 120_000);

describe("a name that looks like a format string, quoted by a translated message", () => {
  it("the recording's edit and delete dialogs and its tag's remove button", async () => {
    const edit = await page(`/?edit=${encodeURIComponent(key)}`);
    expect(edit.status).toBe(200);
    expectLiteral(edit.html, `Edit “${FORMAT}”`, `Remove tag “${TAG}”`);
    const remove = await page(`/?delete=${encodeURIComponent(key)}`);
    expect(remove.status).toBe(200);
    expectLiteral(remove.html, `Delete “${FORMAT}”?`);
  });

  it("the letter editor's title and the top bar's user name", async () => {
    const editor = await page(`/arztbriefe/${letterParam}`);
    expect(editor.status).toBe(200);
    expectLiteral(editor.html, `Medical letter: ${FORMAT}`, `Signed in as ${FORMAT}`);
  });

  it("a custom template's edit and remove dialogs", async () => {
    const edit = await page(`/settings/edit/${templateId}?language=de-DE`);
    expect(edit.status).toBe(200);
    expectLiteral(edit.html, `Edit template: ${FORMAT}`);
    const remove = await page(`/settings/remove/${templateId}?language=de-DE`);
    expect(remove.status).toBe(200);
    expectLiteral(remove.html, `“${FORMAT}” and its structure will be deleted.`);
  });
});

describe("a refusal that quotes what the client sent", () => {
  it("get-upload-url: the file type in the JSON API's detail", async () => {
    const response = await browser.json("/api/get-upload-url", "POST", {
      file_name: `${FORMAT}.wav`,
      file_type: FORMAT,
      language_code: "de",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      detail: `Unsupported file type: ${FORMAT}. Please upload MP3 or WAV files.`,
    });
  });

  it("the upload form: the declared type of a file that is no audio, in German and in English", async () => {
    const upload = (cookie: string) => {
      const form = new FormData();
      form.append("audio", new File([Buffer.from("kein Audio, nur Text")], `${FORMAT}.wav`, { type: FORMAT }));
      form.append("mode", "transcript");
      return serve(request("/?index", { method: "POST", cookie, headers: same, body: form }));
    };
    const german = await upload(browser.cookie);
    expect(german.status).toBe(400);
    expectLiteral(await german.text(), `Dateityp „${FORMAT}“ wird nicht unterstützt.`);
    const inEnglish = await upload(english);
    expect(inEnglish.status).toBe(400);
    expectLiteral(
      await inEnglish.text(),
      `File type "${FORMAT}" is not supported. Please upload only MP3, or WAV files.`,
    );
  });

  it("the chat: a file that is no PDF, by its name", async () => {
    const form = new FormData();
    form.append("intent", "attach");
    form.append("pdf", new File([Buffer.from("kein PDF")], `${FORMAT}.pdf`, { type: "application/pdf" }));
    const response = await serve(request("/chat", { method: "POST", cookie: english, headers: same, body: form }));
    expect(response.status).toBe(400);
    expectLiteral(await response.text(), `“${FORMAT}.pdf” is not a PDF file. Only PDF files are accepted.`);
  });
});
