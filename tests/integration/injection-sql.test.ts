import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import { settleMetering } from "~/services/admin/usage.server";
import { sessionFor } from "../support/admin-pages";
import { setupChatModel } from "../support/chat-fixtures";
import { escapeHtml, SQL } from "../support/injection-payloads";
import { browserFor, type Browser } from "../support/injection-world";
import { seedTranscribedRecording } from "../support/letter-fixtures";
import { setupTestApp } from "../setup/app";

// Issue "hardening — injection": text that looks like SQL is data. Names, tags, a template, a saved prompt and a
// chat question made of SQL fragments (and of quotes, a right-to-left mark, an emoji and LIKE wildcards) go in
// through the forms and the JSON API, come back out of the database, the API and the screens exactly as typed,
// and leave every table in place; the list filters treat them as plain text and find nothing extra.
setupTestApp();
setupChatModel();

const EMAIL = "sql@praxis-sql.example";
let browser: Browser;
let operator: Browser;
let userId: string;
let key: string;

beforeAll(async () => {
  const session = await sessionFor(EMAIL, { name: SQL.drop });
  userId = session.user.id;
  browser = await browserFor(session.cookie);
  operator = await browserFor((await sessionFor("admin@skribent.example")).cookie);
  ({ sourceKey: key } = await seedTranscribedRecording({
    ownerId: userId,
    lines: [{ speaker: "S1", text: SQL.drop }],
    fileName: `${SQL.tautology}.wav`,
  }));
  const expectOk = async (answer: Promise<Response>) => expect((await answer).status).toBeLessThan(400);
  await expectOk(browser.form("/?index", { intent: "rename", key, displayName: SQL.comment }));
  for (const tag of Object.values(SQL)) await expectOk(browser.form("/?index", { intent: "add-tag", key, tag }));
  await expectOk(
    browser.form("/settings/new?language=de-DE", {
      name: SQL.drop,
      "elements[0].name": "Befund",
      "elements[0].description": SQL.tautology,
      prompt: SQL.comment,
    }),
  );
  await expectOk(browser.json("/api/prompts", "POST", { title: SQL.tautology, prompt_text: SQL.drop }));
  await expectOk(browser.form("/chat", { intent: "send", question: SQL.drop }));
  await settleMetering();
}, 120_000);

describe("SQL-looking text", () => {
  it("is stored exactly as typed", async () => {
    const recording = await getDb()
      .selectFrom("recordings")
      .where("storage_key", "=", key)
      .select(["display_name", "original_filename", "tags"])
      .executeTakeFirstOrThrow();
    expect(recording).toEqual({
      display_name: SQL.comment,
      original_filename: `${SQL.tautology}.wav`,
      tags: Object.values(SQL),
    });
    const template = await getDb()
      .selectFrom("custom_templates")
      .where("owner_id", "=", userId)
      .select(["name", "prompt", "elements"])
      .executeTakeFirstOrThrow();
    expect(template).toMatchObject({ name: SQL.drop, prompt: SQL.comment });
    expect(JSON.stringify(template.elements)).toContain(JSON.stringify(SQL.tautology));
    const prompt = await getDb()
      .selectFrom("saved_prompts")
      .where("owner_id", "=", userId)
      .select(["title", "prompt_text"])
      .executeTakeFirstOrThrow();
    expect(prompt).toEqual({ title: SQL.tautology, prompt_text: SQL.drop });
    const question = await getDb()
      .selectFrom("chat_messages")
      .where("owner_id", "=", userId)
      .where("role", "=", "user")
      .select("content")
      .executeTakeFirstOrThrow();
    expect(question.content).toBe(SQL.drop);
  });

  it("comes back through the JSON API and the screens as typed", async () => {
    const files = await (await browser.get("/api/files")).json();
    expect(JSON.stringify(files)).toContain(JSON.stringify(SQL.comment));
    for (const tag of Object.values(SQL)) expect(JSON.stringify(files)).toContain(JSON.stringify(tag));
    const prompts = JSON.stringify(await (await browser.get("/api/prompts")).json());
    expect(prompts).toContain(JSON.stringify(SQL.tautology));
    expect(prompts).toContain(JSON.stringify(SQL.drop));

    const audio = await (await browser.get("/")).text();
    for (const text of [SQL.comment, `${SQL.tautology}.wav`, ...Object.values(SQL)])
      expect(audio).toContain(escapeHtml(text));
    expect(await (await browser.get("/chat")).text()).toContain(escapeHtml(SQL.drop));
    const settings = await (await browser.get("/settings?language=de-DE")).text();
    expect(settings).toContain(escapeHtml(SQL.drop));
  });

  it("leaves every table in place", async () => {
    for (const table of ["recordings", "users", "custom_templates", "saved_prompts", "chat_messages"]) {
      const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(getDb());
      expect(Number(rows[0].n), table).toBeGreaterThan(0);
    }
  });
});

describe("a list filter", () => {
  const auditOf = async (user: string) =>
    (await operator.get(`/betrieb/audit?period=7d&user=${encodeURIComponent(user)}`)).text();

  it("on the audit trail matches the text of an address, never more", async () => {
    // The control: a part of the address finds the clinician's entries.
    expect(await auditOf("praxis-sql")).toContain(EMAIL);
    for (const value of [SQL.tautology, SQL.drop, "%", "_", "%@%", "' OR email ilike '%", "\\"]) {
      const html = await auditOf(value);
      expect(html, value).not.toContain(EMAIL);
      expect(html, value).not.toContain("admin@skribent.example</td>");
    }
  });

  it("on the template repository finds nothing for SQL, and something for a real name", async () => {
    const countOf = async (q: string) => {
      const html = await (await browser.get(`/settings/repository?language=de-DE&q=${encodeURIComponent(q)}`)).text();
      return Number(/data-results-count[^>]*>\D*(\d+)/.exec(html)?.[1]);
    };
    expect(await countOf("")).toBeGreaterThan(0);
    for (const value of [SQL.tautology, "' OR 1=1 --", "%", ".*"]) expect(await countOf(value), value).toBe(0);
  });
});

describe("a NUL in a URL", () => {
  it("is refused with 400 before any lookup, where the database would fail with a 500", async () => {
    const paths = [
      "/resume/%00",
      "/transcriptions/%00x",
      "/arztbriefe/%00x",
      "/api/arztbrief/%00",
      "/api/transcript_v2/%00",
      "/api/audio-playback/%00",
      "/api/transcribe_v2/%00/status",
      "/settings/edit/%00?language=de-DE",
    ];
    for (const path of paths) expect((await browser.get(path)).status, path).toBe(400);
    expect((await operator.get("/betrieb/audit?user=%00")).status).toBe(400);
    expect((await browser.form("/resume/%00", {})).status).toBe(400);
  });
});
