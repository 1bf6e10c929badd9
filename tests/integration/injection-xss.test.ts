import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { sessionFor } from "../support/admin-pages";
import { routeModules } from "../support/access-matrix";
import { setupChatModel } from "../support/chat-fixtures";
import { ALL_XSS, escapeHtml, injectionProblems, nonceOf, XSS } from "../support/injection-payloads";
import { screens, type Page } from "../support/injection-screens";
import { browserFor, HOSTILE, seedHostileWorld, type Browser, type HostileWorld } from "../support/injection-world";
import { serve } from "../support/remix-document";
import { request, setupTestApp } from "../setup/app";

// Issue "hardening — injection": the clinician's own data is the attacker's input. One clinician's file names,
// tags, template, transcript, letter (versions, proposal, refinement instruction), saved prompt, chat (question,
// answer, PDF name and text), live transcript and kept form are all XSS payloads; every screen that shows them is
// rendered by the whole app (tests/support/remix-document.ts) in German and English, and in each document the
// payloads are text: no live markup, every <script> carries the response's CSP nonce (one that broke out of
// Remix's inline loader-data script would not), no event-handler attribute, no javascript: link target.
setupTestApp();
const llm = setupChatModel();

let world: HostileWorld;
let operator: Browser;
let anonymous: Browser;
beforeAll(async () => {
  world = await seedHostileWorld(llm);
  operator = await browserFor((await sessionFor("admin@skribent.example")).cookie);
  anonymous = await browserFor("");
}, 120_000);

const asWho = (page: Page) =>
  page.who === "operator" ? operator : page.who === "anonymous" ? anonymous : world.browser;

async function documentOf(response: Response) {
  const html = await response.text();
  return { html, problems: injectionProblems(html, nonceOf(response.headers.get("Content-Security-Policy"))) };
}

/** Every screen's pages, with the hostile clinician's ids. */
const pages = () =>
  Object.entries(screens).flatMap(([name, entry]) =>
    "pages" in entry ? entry.pages(world.keys).map((page) => ({ name, page })) : [],
  );

/** The JSON reads of the hostile clinician's data. */
const apiPaths = () => [
  "/api/files",
  "/api/arztbriefe",
  `/api/arztbrief/${world.keys.letterParam}`,
  `/api/transcript_v2/${world.keys.transcriptParam}`,
  "/api/prompts",
  `/api/structure/user?language=de-DE&template=${world.keys.templateId}`,
];

function missing(html: string, shows: Page["shows"]) {
  return shows.filter((field) => !html.includes(escapeHtml(HOSTILE[field])));
}

describe("the detector", () => {
  it("finds a payload that is live, and passes one that is text", () => {
    const nonce = "abc123";
    for (const payload of [XSS.script, XSS.img, XSS.svg, XSS.breakout])
      expect(injectionProblems(`<p>${payload}</p>`, nonce), payload).not.toEqual([]);
    expect(injectionProblems(`<a href="${XSS.link}">x</a>`, nonce)).not.toEqual([]);
    expect(injectionProblems(`<a href=" JaVa&#x09;script&colon;alert(1)">x</a>`, nonce)).not.toEqual([]);
    expect(injectionProblems(`<meta http-equiv="refresh" content="0;url=javascript:alert(1)"/>`, nonce)).not.toEqual(
      [],
    );
    expect(injectionProblems(`<div onclick="x()">`, nonce)).not.toEqual([]);
    // A break-out of an inline script: the second <script> has no nonce.
    const inline = `<script nonce="${nonce}">window.__remixContext = {"a":"${XSS.breakout}"};</script>`;
    expect(injectionProblems(inline, nonce)).not.toEqual([]);
    expect(injectionProblems(`<script nonce="${nonce}"></script>`, "other")).not.toEqual([]);

    const safe = `<p>${escapeHtml(ALL_XSS)}</p><input value="${escapeHtml(XSS.link)}"/><script nonce="${nonce}">x</script>`;
    expect(injectionProblems(safe, nonce)).toEqual([]);
  });
});

describe("every screen", () => {
  it("has an entry for every route module with a component, and every entry is a route module", async () => {
    const modules = routeModules();
    const withComponent: string[] = [];
    for (const [name, file] of modules)
      if (
        typeof ((await import(/* @vite-ignore */ path.resolve(file))) as { default?: unknown }).default === "function"
      )
        withComponent.push(name);
    expect(withComponent.filter((name) => !(name in screens))).toEqual([]);
    expect(Object.keys(screens).filter((name) => !modules.has(name))).toEqual([]);
  });

  it.each(["de", "en"] as const)("shows the hostile data as text (%s)", async (language) => {
    const problems: string[] = [];
    for (const { name, page } of pages()) {
      const response = await asWho(page).get(page.path, language);
      const { html, problems: found } = await documentOf(response);
      if (response.status !== 200) problems.push(`${name} ${page.path}: ${response.status}`);
      problems.push(...found.map((problem) => `${name} ${page.path}: ${problem}`));
      for (const field of missing(html, page.shows)) problems.push(`${name} ${page.path}: ${field} not shown`);
    }
    expect(problems).toEqual([]);
  });

  it("keeps the payloads inside the player page's inline loader data", async () => {
    const response = await world.browser.get(`/?play=${encodeURIComponent(world.keys.recordingKey)}`);
    const { html, problems } = await documentOf(response);
    expect(problems).toEqual([]);
    const data = /<script nonce="[^"]+">window\.__remixContext = ([\s\S]*?);<\/script>/.exec(html);
    expect(data, "the island's loader data").not.toBeNull();
    // The JSON is written with <, > and & as \u escapes: still the same data once the browser parses it.
    expect(data![1]).not.toMatch(/<\/?script/i);
    expect(data![1]).toContain(
      JSON.stringify(HOSTILE.displayName).slice(1, -1).replace(/</g, "\\u003c").replace(/>/g, "\\u003e"),
    );
  });

  it("echoes refused input as text: a chat question with a file that is no PDF, an invalid template, an unknown account", async () => {
    const chat = new FormData();
    chat.append("intent", "send");
    chat.append("question", `${XSS.svg} ${XSS.breakout}`);
    chat.append("pdf", new File([XSS.script], HOSTILE.pdfName, { type: "application/pdf" }));
    const failedChat = await world.browser.multipart("/chat", chat);
    const invalidTemplate = await world.browser.form("/settings/new?language=de-DE", {
      name: HOSTILE.templateName,
      "elements[0].name": XSS.img,
      "elements[0].description": XSS.svg,
      prompt: XSS.breakout,
    });
    const refusedAccount = await operator.form("/betrieb/accounts", { email: `${XSS.img}@x.example` });
    const unknownSessions = await operator.form("/betrieb/sessions", {
      intent: "end-account",
      email: `${XSS.svg}@x.example`,
    });
    for (const [response, echoed] of [
      [failedChat, `${XSS.svg} ${XSS.breakout}`],
      [invalidTemplate, XSS.img],
      [refusedAccount, `${XSS.img}@x.example`.toLowerCase()],
      [unknownSessions, `${XSS.svg}@x.example`],
    ] as const) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      const { html, problems } = await documentOf(response);
      expect(problems).toEqual([]);
      expect(html).toContain(escapeHtml(echoed));
    }
  });
});

describe("the JSON API", () => {
  it("answers hostile data as JSON that no browser renders as a page", async () => {
    for (const p of apiPaths()) {
      const response = await world.browser.get(p);
      const text = await response.text();
      expect(response.status, p).toBe(200);
      expect(response.headers.get("Content-Type"), p).toMatch(/^application\/json/);
      expect(response.headers.get("X-Content-Type-Options"), p).toBe("nosniff");
      expect(text, p).toContain("alert(1)");
    }
  });
});

describe("every answer's headers", () => {
  // ASVS 4.1.1, 14.2.2, 14.3.2: each screen (in both languages) and each JSON read of patient data says what it is,
  // with its charset, and that no browser, proxy or shared cache may keep it.
  it("declares the type with its charset and forbids caching, on every screen and JSON read", async () => {
    const problems: string[] = [];
    const check = (what: string, response: Response, type: RegExp) => {
      const contentType = response.headers.get("Content-Type") ?? "";
      const cacheControl = response.headers.get("Cache-Control") ?? "";
      if (!type.test(contentType)) problems.push(`${what}: Content-Type ${contentType}`);
      if (!/\bno-store\b/.test(cacheControl)) problems.push(`${what}: Cache-Control ${cacheControl}`);
    };
    for (const language of ["de", "en"] as const)
      for (const { name, page } of pages()) {
        const response = await asWho(page).get(page.path, language);
        check(`${name} ${page.path} (${language})`, response, /^text\/html; charset=utf-8$/i);
      }
    for (const p of apiPaths()) check(p, await world.browser.get(p), /^application\/json; charset=utf-8$/i);
    expect(problems).toEqual([]);
  });
});

describe("the downloads", () => {
  it("sends the usage CSV as an attachment whose name no query can change", async () => {
    const hostile = ['2024-01-01"\r\nSet-Cookie: x=1', "../../etc/passwd", '2024-01-01";filename=evil.html'];
    for (const value of hostile) {
      const response = await operator.get(`/betrieb/usage.csv?period=custom&from=${encodeURIComponent(value)}&to=x`);
      expect(response.status).toBe(200);
      expect(response.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
      expect(response.headers.get("Content-Disposition")).toMatch(
        /^attachment; filename="usage-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/,
      );
      expect(response.headers.get("Set-Cookie")).toBeNull();
      const csv = await response.text();
      // The hostile clinician's name is one quoted cell of text (its quotes doubled), for a spreadsheet to show.
      expect(csv).toContain(`"${HOSTILE.userName.replace(/"/g, '""')}"`);
    }
    const anonymousCsv = await serve(request("/betrieb/usage.csv"));
    expect(anonymousCsv.headers.get("Content-Disposition")).toBeNull();
  });

  it("plays the recording with the hostile name as audio in a sandbox, never as a page", async () => {
    // There is no letter export (DOCX, PDF or text) in the product; the stored audio is the other download.
    const key = world.keys.uploadKey;
    const { playback_url } = await (await world.browser.get(`/api/audio-playback/${key}`)).json();
    const url = new URL(playback_url);
    expect(url.origin).toBe(new URL(request("/").url).origin);
    const audio = await serve(request(`${url.pathname}${url.search}`));
    expect(audio.status).toBe(200);
    expect(audio.headers.get("Content-Type")).toBe("audio/wav");
    expect(audio.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(audio.headers.get("Content-Security-Policy")).toBe("default-src 'none'; sandbox");
    expect(audio.headers.get("Content-Disposition") ?? "").not.toMatch(/svg|onload|constructor/i);
  });
});
