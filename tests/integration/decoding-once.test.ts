import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import { sessionFor } from "../support/admin-pages";
import { escapeHtml } from "../support/injection-payloads";
import { browserFor, type Browser } from "../support/injection-world";
import { seedTranscribedRecording } from "../support/letter-fixtures";
import { setupTestApp } from "../setup/app";

// ASVS 5.0 1.1.1: input is decoded into its canonical form once, before it is checked, stored or looked up. What
// still looks percent-encoded or like an HTML entity after that one decoding is the user's text: a clinician who
// names a recording "50%25" means those five characters; a path that spells "/" as "%252F" is refused (the router
// would decode it a second time).
setupTestApp();

const EMAIL = "decode@praxis-decode.example";
// Each value is what arrives once the form or JSON body has been decoded the one time it is encoded in transit.
const TYPED = {
  percent: "Befund 50%25 %41%42",
  traversal: "..%252f..%252fetc",
  plus: "a+b %2B c",
  entity: "&lt;b&gt; &amp;",
} as const;

let browser: Browser;
let userId: string;
let transcriptKey: string;

beforeAll(async () => {
  const session = await sessionFor(EMAIL);
  userId = session.user.id;
  browser = await browserFor(session.cookie);
  const seeded = await seedTranscribedRecording({
    ownerId: userId,
    lines: [{ speaker: "S1", text: "Kontrolle" }],
    fileName: "kontrolle.wav",
  });
  transcriptKey = seeded.transcriptKey;
  const expectOk = async (answer: Promise<Response>) => expect((await answer).status).toBeLessThan(400);
  await expectOk(browser.form("/?index", { intent: "rename", key: seeded.sourceKey, displayName: TYPED.percent }));
  for (const tag of Object.values(TYPED))
    await expectOk(browser.form("/?index", { intent: "add-tag", key: seeded.sourceKey, tag }));
  await expectOk(browser.json("/api/prompts", "POST", { title: TYPED.traversal, prompt_text: TYPED.plus }));
}, 60_000);

describe("text that still looks encoded after the one decoding", () => {
  it("is stored exactly as typed, never decoded a second time", async () => {
    const recording = await getDb()
      .selectFrom("recordings")
      .where("owner_id", "=", userId)
      .select(["display_name", "tags"])
      .executeTakeFirstOrThrow();
    expect(recording).toEqual({ display_name: TYPED.percent, tags: Object.values(TYPED) });
    const prompt = await getDb()
      .selectFrom("saved_prompts")
      .where("owner_id", "=", userId)
      .select(["title", "prompt_text"])
      .executeTakeFirstOrThrow();
    expect(prompt).toEqual({ title: TYPED.traversal, prompt_text: TYPED.plus });
  });

  it("comes back as typed from the JSON API and is escaped once on the screen", async () => {
    const files = JSON.stringify(await (await browser.get("/api/files")).json());
    for (const value of Object.values(TYPED)) expect(files).toContain(JSON.stringify(value));
    const page = await (await browser.get("/")).text();
    for (const value of Object.values(TYPED)) expect(page).toContain(escapeHtml(value));
    // The entity is shown as the characters typed, not as the markup it would decode to.
    expect(page).not.toContain("<b>");
    expect(page).not.toContain("Befund 50% AB");
  });
});

describe("a key in the path", () => {
  it("is found with its slashes encoded once, and refused before any lookup when they are encoded twice", async () => {
    const once = transcriptKey.split("/").join("%2F");
    const twice = transcriptKey.split("/").join("%252F");
    const found = await browser.get(`/api/transcript_v2/${once}`);
    expect(found.status).toBe(200);
    expect((await found.json()).transcript_key).toBe(transcriptKey);
    for (const path of [`/api/transcript_v2/${twice}`, `/transcriptions/${twice.replace(/^transcripts%252F/, "")}`]) {
      const answer = await browser.get(path);
      // The router would turn the "%2F" left after the one decoding into "/" and find the transcript.
      expect(answer.status, path).toBe(400);
      expect(await answer.text(), path).not.toContain("Kontrolle");
    }
  });
});

describe("a filter in the query string", () => {
  it("matches the decoded text only: an encoded spelling of a name finds nothing", async () => {
    const countOf = async (q: string) => {
      const html = await (await browser.get(`/settings/repository?language=de-DE&q=${encodeURIComponent(q)}`)).text();
      return Number(/data-results-count[^>]*>\D*(\d+)/.exec(html)?.[1]);
    };
    const all = await countOf("");
    expect(all).toBeGreaterThan(0);
    const some = await countOf("Arzt");
    expect(some).toBeGreaterThan(0);
    // "%41rzt" decoded a second time would be "Arzt".
    expect(await countOf("%41rzt")).toBe(0);
  });
});
