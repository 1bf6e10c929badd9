import { describe, expect, it } from "vitest";
import { formatDate } from "~/i18n";
import { getDb } from "~/models/db.server";
import { action as vocabularyAction, loader as vocabularyLoader } from "~/routes/_app.settings.vocabulary";
import { correctWord } from "~/services/transcription/corrections.server";
import {
  addVocabularyTerm,
  engineVocabulary,
  USER_VOCABULARY_LIMITS,
} from "~/services/transcription/user-vocabulary.server";
import { languageCookie } from "~/services/web/i18n.server";
import { browserWith, formsOf, type Browser } from "../support/session-browsers";
import { seedUncertainTranscript } from "../support/transcript-corrections";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Settings › "Mein Vokabular" (issue 24, ADR 0031): the doctor sees the terms corrections taught, per language, with
// what the engine had heard and when each was added; adds one by hand and removes one with plain form posts, as a
// browser without JavaScript does (the whole app, tests/support/remix-document.ts). Refused input comes back as typed
// with a translated message; another user's term is a 404 and stays. Adding and removing are audited without the term.
setupTestApp();

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const HERE = "/settings/vocabulary";

async function doctor(email: string) {
  const { user, cookie } = await signedInUser({ email });
  return { userId: user.id, cookie, browser: await browserWith([cookie], FIREFOX) };
}

function teach(userId: string, language: "de" | "en", content: string, heard: string) {
  return getDb()
    .transaction()
    .execute((trx) => addVocabularyTerm(trx, { userId, language, content, heard }));
}

async function termsOf(userId: string) {
  return getDb()
    .selectFrom("user_vocabulary")
    .where("owner_id", "=", userId)
    .select(["id", "language", "content", "sounds_like"])
    .orderBy("content")
    .execute();
}

async function auditOf(userId: string) {
  return getDb()
    .selectFrom("audit_events")
    .where("user_id", "=", userId)
    .where("action", "like", "vocabulary.%")
    .select(["action", "entity_type", "entity_id", "outcome"])
    .orderBy("at")
    .execute();
}

function decoded(html: string) {
  return html
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/<!-- -->/g, "");
}

async function dialog(browser: Browser, language: "de" | "en" = "de") {
  const response = await browser.get(HERE, language);
  expect(response.status).toBe(200);
  return decoded(await response.text());
}

/** The terms shown for one language, in the order shown, with their misheard forms and dates. */
function shownTerms(html: string, language: "de" | "en") {
  const section = /<section[^>]*data-vocabulary-language="(?:de|en)"[^>]*>[\s\S]*?<\/section>/g;
  const mine = [...html.matchAll(section)].find(([s]) => s.includes(`data-vocabulary-language="${language}"`));
  return [...(mine?.[0] ?? "").matchAll(/<li[^>]*data-term="([^"]*)"[^>]*>([\s\S]*?)<\/li>/g)].map(([, id, row]) => ({
    id,
    term: /data-term-content[^>]*>([^<]*)</.exec(row)![1],
    heard: /data-sounds-like[^>]*>([^<]*)</.exec(row)?.[1] ?? null,
    added: /<time[^>]*>([^<]*)<\/time>/.exec(row)![1],
    // The remove button's accessible name includes the term (aria-describedby names the term's element).
    describedBy: /<button[^>]*aria-describedby="([^"]*)"/.exec(row)![1],
    nameId: /<p[^>]*id="([^"]*)"[^>]*data-term-content/.exec(row)![1],
  }));
}

function add(browser: Browser, term: string, language = "de") {
  return browser.post(HERE, { intent: "add", term, language });
}

function typedTerm(html: string) {
  return /<input[^>]*name="term"[^>]*>/.exec(html)![0].match(/value="([^"]*)"/)?.[1] ?? "";
}

describe("the doctor's own vocabulary in Settings", () => {
  it("lists the terms corrections taught, per language and by term, with the misheard forms, dates and the count", async () => {
    const anna = await doctor("anna.vokabular@praxis.example");
    const other = await doctor("jonas.vokabular@praxis.example");
    // A correction in a transcript teaches the first term, as the review does.
    const seeded = await seedUncertainTranscript(anna.userId, [{ speaker: "S1", text: "Dazu ~Sakubitril ." }]);
    const corrected = await correctWord({
      userId: anna.userId,
      key: seeded.transcriptKey,
      baseVersion: 1,
      word: { segment: "t0p0", index: 1 },
      text: "Sacubitril",
      applyToAll: false,
      addToVocabulary: true,
    });
    expect(corrected.vocabulary).toBe("added");
    await teach(anna.userId, "de", "Amiodaron-Pulmonalfibrose", "");
    await teach(anna.userId, "de", "Ablation", "Ablazion");
    await teach(anna.userId, "en", "sacubitril", "sacubatril");
    await teach(other.userId, "de", "Jonasbegriff", "Jonas");

    const html = await dialog(anna.browser);
    expect(html).toContain("Mein Vokabular");
    expect(html).toContain("4 von 500 Begriffen");
    const german = shownTerms(html, "de");
    expect(german.map((t) => [t.term, t.heard])).toEqual([
      ["Ablation", "gehört als: Ablazion"],
      ["Amiodaron-Pulmonalfibrose", null],
      ["Sacubitril", "gehört als: Sakubitril"],
    ]);
    expect(shownTerms(html, "en").map((t) => [t.term, t.heard])).toEqual([["sacubitril", "gehört als: sacubatril"]]);
    const stored = await termsOf(anna.userId);
    const rows = await getDb()
      .selectFrom("user_vocabulary")
      .where("owner_id", "=", anna.userId)
      .select(["id", "created_at"])
      .execute();
    for (const shown of german) {
      const row = rows.find((r) => r.id === shown.id)!;
      expect(shown.added).toBe(formatDate(row.created_at, "de"));
      expect(shown.describedBy).toBe(shown.nameId);
    }
    expect(stored).toHaveLength(4);
    expect(html).not.toContain("Jonasbegriff");

    // The settings page leads there; in English the dialog speaks English.
    const settings = decoded(await (await anna.browser.get("/settings")).text());
    expect(settings).toMatch(/<a[^>]*href="\/settings\/vocabulary"[^>]*>Vokabular anzeigen …<\/a>/);
    const english = await dialog(anna.browser, "en");
    expect(english).toContain("My vocabulary");
    expect(english).toContain("4 of 500 terms");
    expect(english).toContain("heard as: Ablazion");
    expect(english).toMatch(/<h3[^>]*>German<\/h3>/);
  });

  it("works without JavaScript: a server-rendered dialog with plain forms to remove each term and to add one", async () => {
    const anna = await doctor("ohne-js@praxis.example");
    await teach(anna.userId, "de", "Sacubitril", "Sakubitril");
    const html = await dialog(anna.browser);
    expect(html).not.toContain("__remixContext");
    expect(html).not.toContain("entry.client");
    const [term] = await termsOf(anna.userId);
    const forms = formsOf(html);
    expect(forms.map((f) => [f.method, f.action, f.fields.get("intent")])).toEqual([
      ["post", HERE, "remove"],
      ["post", HERE, "add"],
    ]);
    expect(forms[0].fields.get("id")).toBe(term.id);
    // The language is a choice the form carries, German preselected for a German reader.
    expect(html).toMatch(/<select[^>]*name="language"/);
    expect(html).toMatch(/<option value="de" selected/);
  });

  it("adds a term by hand: back to the list with a toast, audited by its id, sent to the engine first", async () => {
    const anna = await doctor("hand@praxis.example");
    const answer = await add(anna.browser, "  TAVI-Klappe ");
    expect(answer.status).toBe(302);
    expect(answer.headers.get("Location")).toBe(HERE);
    const html = await dialog(anna.browser);
    expect(html).toContain("„TAVI-Klappe“ wurde Ihrem Vokabular hinzugefügt.");
    expect(shownTerms(html, "de").map((t) => [t.term, t.heard])).toEqual([["TAVI-Klappe", null]]);
    expect(html).toContain("1 von 500 Begriffen");
    // The same term in English is another term (the built-in list is German only).
    expect((await add(anna.browser, "Ramipril", "en")).status).toBe(302);

    const [english, german] = await termsOf(anna.userId);
    expect([german.language, german.content, german.sounds_like]).toEqual(["de", "TAVI-Klappe", []]);
    expect([english.language, english.content]).toEqual(["en", "Ramipril"]);
    expect((await engineVocabulary({ userId: anna.userId, language: "de" }))[0]).toEqual({ content: "TAVI-Klappe" });
    const audits = await auditOf(anna.userId);
    expect(audits).toEqual([
      { action: "vocabulary.add", entity_type: "vocabulary_term", entity_id: german.id, outcome: "success" },
      { action: "vocabulary.add", entity_type: "vocabulary_term", entity_id: english.id, outcome: "success" },
    ]);
    expect(JSON.stringify(await getDb().selectFrom("audit_events").selectAll().execute())).not.toContain("TAVI");
  });

  it("refuses a term the built-in list or the doctor already has, keeping what was typed", async () => {
    const anna = await doctor("bekannt@praxis.example");
    await teach(anna.userId, "de", "Sacubitril", "Sakubitril");
    const builtIn = await add(anna.browser, "ramipril");
    expect(builtIn.status).toBe(400);
    const html = decoded(await builtIn.text());
    expect(html).toContain("„ramipril“ kennt die Spracherkennung schon: Der Begriff steht in der eingebauten Liste.");
    expect(typedTerm(html)).toBe("ramipril");
    expect(html).toMatch(/<input[^>]*name="term"[^>]*aria-invalid="true"/);

    const again = await add(anna.browser, "SACUBITRIL");
    expect(again.status).toBe(400);
    expect(decoded(await again.text())).toContain("„SACUBITRIL“ steht schon in Ihrem Vokabular.");
    expect((await termsOf(anna.userId)).map((t) => t.content)).toEqual(["Sacubitril"]);
    expect(await auditOf(anna.userId)).toEqual([]);
  });

  it("refuses a blank, too long or multi-line term with a translated message (400), keeping the input", async () => {
    const anna = await doctor("falsch@praxis.example");
    const long = "Herzinsuffizienz".repeat(4).slice(0, USER_VOCABULARY_LIMITS.contentMax + 1);
    const tooLong = await add(anna.browser, long);
    expect(tooLong.status).toBe(400);
    const html = decoded(await tooLong.text());
    expect(html).toContain("Ein Begriff hat höchstens 60 Zeichen.");
    expect(typedTerm(html)).toBe(long);
    // The dialog is all there around the message: the list and the way back.
    expect(html).toContain("0 von 500 Begriffen");

    const blank = await add(anna.browser, "   ");
    expect(blank.status).toBe(400);
    expect(decoded(await blank.text())).toContain("Bitte geben Sie einen Begriff ein.");
    for (const term of ["Sacu\nbitril", "Sacu\u0000bitril", "Sacu\u200bbitril", "—"]) {
      const refused = await add(anna.browser, term);
      expect(refused.status, JSON.stringify(term)).toBe(400);
      expect(decoded(await refused.text())).toContain("Ein Begriff steht in einer Zeile");
    }
    const language = await add(anna.browser, "Sacubitril", "fr");
    expect(language.status).toBe(400);
    expect(decoded(await language.text())).toContain("Bitte wählen Sie Deutsch oder Englisch.");

    // In English, in English.
    const english = await callRoute(
      vocabularyAction,
      request(HERE, {
        method: "POST",
        cookie: `${anna.cookie}; ${await englishCookie()}`,
        headers: { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" },
        body: new URLSearchParams({ intent: "add", term: long, language: "de" }),
      }),
    );
    expect(english.status).toBe(400);
    expect(JSON.stringify(await english.json())).toContain("A term has at most 60 characters.");
    expect(await termsOf(anna.userId)).toEqual([]);

    const unknown = await anna.browser.post(HERE, { intent: "import", term: "Sacubitril", language: "de" });
    expect(unknown.status).toBe(400);
  });

  it("refuses a new term when the list is full (500), saying so", async () => {
    const anna = await doctor("voll@praxis.example");
    await getDb()
      .insertInto("user_vocabulary")
      .values(
        Array.from({ length: USER_VOCABULARY_LIMITS.entries }, (_, i) => ({
          owner_id: anna.userId,
          language: "de" as const,
          content: `Begriff${i}`,
          content_key: `begriff${i}`,
          sounds_like: "[]",
          updated_at: new Date(),
        })),
      )
      .execute();
    const full = await add(anna.browser, "Sacubitril");
    expect(full.status).toBe(409);
    const html = decoded(await full.text());
    expect(html).toContain("Ihr Vokabular ist voll (500 Begriffe).");
    expect(typedTerm(html)).toBe("Sacubitril");
    expect(html).toContain("500 von 500 Begriffen");
    expect(await termsOf(anna.userId)).toHaveLength(USER_VOCABULARY_LIMITS.entries);
  });

  it("removes a term: back to the list with a toast, audited by its id, no longer sent to the engine", async () => {
    const anna = await doctor("entfernen@praxis.example");
    await teach(anna.userId, "de", "Sacubitril", "Sakubitril");
    await teach(anna.userId, "de", "Ablation", "Ablazion");
    const html = await dialog(anna.browser);
    const row = shownTerms(html, "de").find((t) => t.term === "Sacubitril")!;
    const form = formsOf(html).find((f) => f.fields.get("id") === row.id)!;

    const answer = await anna.browser.post(form.action!, form.fields);
    expect(answer.status).toBe(302);
    expect(answer.headers.get("Location")).toBe(HERE);
    const after = await dialog(anna.browser);
    expect(after).toContain("„Sacubitril“ wurde aus Ihrem Vokabular entfernt.");
    expect(shownTerms(after, "de").map((t) => t.term)).toEqual(["Ablation"]);
    expect((await termsOf(anna.userId)).map((t) => t.content)).toEqual(["Ablation"]);
    const sent = await engineVocabulary({ userId: anna.userId, language: "de" });
    expect(sent.some((entry) => entry.content === "Sacubitril")).toBe(false);
    expect(await auditOf(anna.userId)).toEqual([
      { action: "vocabulary.remove", entity_type: "vocabulary_term", entity_id: row.id, outcome: "success" },
    ]);
  });

  it("answers 404 for another user's term, a made-up id and a malformed one, and removes nothing", async () => {
    const anna = await doctor("fremd-a@praxis.example");
    const jonas = await doctor("fremd-b@praxis.example");
    await teach(anna.userId, "de", "Sacubitril", "Sakubitril");
    const [annas] = await termsOf(anna.userId);
    for (const id of [annas.id, "00000000-0000-4000-8000-000000000000", "abc", ""]) {
      const answer = await jonas.browser.post(HERE, { intent: "remove", id });
      expect(answer.status, id).toBe(404);
    }
    expect(await termsOf(anna.userId)).toHaveLength(1);
    expect(await auditOf(jonas.userId)).toEqual([]);
    // The loader lists the caller's terms only, signed out is sign-in.
    const listed = await callRoute(vocabularyLoader, request(HERE, { cookie: jonas.cookie }));
    expect(JSON.stringify(await listed.json())).not.toContain("Sacubitril");
    const signedOut = await callRoute(vocabularyAction, request(HERE, { method: "POST", body: "intent=remove" }));
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.get("Location")).toMatch(/^\/login/);
  });
});

async function englishCookie() {
  return (await languageCookie().serialize("en")).split(";")[0];
}
