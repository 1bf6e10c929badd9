import { describe, expect, it } from "vitest";
import { action as editorAction } from "~/routes/_app.arztbriefe.$/route";
import { action as letterAction } from "~/routes/api.arztbrief.$";
import { action as regenerateAction, loader as regenerateLoader } from "~/routes/api.arztbrief-regenerate.$";
import { getDb } from "~/models/db.server";
import type { StoredLetterContent } from "~/models/schema";
import { findDataBlocks } from "~/services/letters/data-blocks";
import { runLetterJob } from "~/services/letters/job.server";
import { correctWord } from "~/services/transcription/corrections.server";
import { getTranscript } from "~/services/transcription/transcripts.server";
import { startSession } from "~/services/web/session.server";
import type { ApiClient } from "../support/api-client";
import { letterJobOf, letterStatusOf } from "../support/letter-fixtures";
import { page, post, seedLetter, titlesAndTexts, versionsOf } from "../support/letter-screens";
import { setupLetterModel, signInWith, withParams } from "../support/letters-api";
import { reply, type FakeChatRequest } from "../support/fake-openai-chat";
import { citableLine, sectionAnswer } from "../support/fake-llm-letters";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Regeneration from the corrected transcript (issue 24, ADR 0032): the whole letter or one section written again from
// the transcript as the doctor corrected it, as a letter job whose result is a proposal with a per-section diff — the
// letter's text and versions stay as they are until the doctor accepts. The editor's forms are posted as a browser
// without JavaScript posts them and its pages rendered as the server renders them (tests/support/letter-screens.ts); the
// JSON call is made as an API client makes it; the language model is the real OpenAI-compatible adapter talking HTTP
// to a fake server (tests/support/letters-api.ts) that writes each section from the transcript it is sent.
const app = setupTestApp({ provider: true });
const llm = setupLetterModel();
const signIn = signInWith(app);

/** The soap template's sections (the letters' template), as a doctor has left them. */
const LETTER: StoredLetterContent = {
  structured_output: [
    { Subjektiv: "Husten seit drei Tagen." },
    { Objektiv: "Lunge frei." },
    { Beurteilung: "Akuter Infekt." },
    { Plan: "Keine Informationen gefunden" },
  ],
};

/** A model that writes every section from the whole transcript block it is sent: what the doctor corrected shows. */
function echoResponder(request: FakeChatRequest) {
  const schema = request.body?.response_format?.json_schema?.schema;
  const text = (request.body.messages as Array<{ content: string }>).map((m) => m.content).join("\n");
  const transcript = findDataBlocks(text).find((b) => b.kind === "TRANSCRIPT")?.body ?? "";
  const lines = transcript.split("\n").map(citableLine);
  const heard = lines
    .map((l) => l.text)
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  const keys = Object.keys(schema?.properties?.sections?.properties ?? {});
  const sources = lines.flatMap((l) => l.sources);
  return reply.json({
    document_type: "patient_conversation",
    sections: Object.fromEntries(
      keys.map((key, i) => [key, sectionAnswer(schema, key, `Neu ${i + 1}: ${heard}`, sources)]),
    ),
  });
}

async function correctHusten(userId: string, transcriptKey: string) {
  const { document } = await getTranscript({ userId, key: transcriptKey });
  const index = document.turns[1]!.paragraphs[0]!.findIndex((w) => w.text.startsWith("Husten"));
  expect(index).toBeGreaterThanOrEqual(0);
  await correctWord({
    userId,
    key: transcriptKey,
    baseVersion: 1,
    word: { segment: "t1p0", index },
    text: "Reizhusten.",
    applyToAll: false,
    addToVocabulary: false,
  });
}

async function runTheJob(recordingId: string) {
  const job = await letterJobOf(recordingId);
  expect(job?.kind).toBe("regenerate");
  return runLetterJob(job!.id);
}

/** One section of a proposal's diff as the page shows it: its change and its text without markup. */
function diffSection(html: string, title: string) {
  const at = html.indexOf(`data-diff-section="${title}"`);
  if (at < 0) return null;
  const item = html.slice(at, html.indexOf("</li>", at));
  return {
    change: /data-change="(\w+)"/.exec(item)![1],
    inserted: [...item.matchAll(/<ins[^>]*>([^<]*)<\/ins>/g)].map((m) => m[1]).join(""),
  };
}

async function contentOf(key: string) {
  const versions = await versionsOf(key);
  return { count: versions.length, current: versions.at(-1)!.content };
}

async function auditActions(userId: string) {
  const rows = await getDb()
    .selectFrom("audit_events")
    .where("user_id", "=", userId)
    .where("action", "like", "letter.regenerate%")
    .select(["action", "outcome", "entity_id"])
    .orderBy("id", "asc")
    .execute();
  return rows;
}

describe("regenerating a letter from the corrected transcript in the editor", () => {
  it("makes a proposal of the whole letter with the corrected word; the doctor's text and versions stay until accepted", async () => {
    llm().responder = echoResponder;
    const { user, cookie } = await signedInUser({ email: "regen-all@praxis.example" });
    const letter = await seedLetter(user.id, { content: LETTER });
    const at = { "*": letter.path };
    // The doctor's own edit, then a word of the transcript corrected.
    const edited = {
      structured_output: [
        { Subjektiv: "Husten seit drei Tagen, vom Arzt ergänzt." },
        ...(LETTER as { structured_output: Record<string, string>[] }).structured_output.slice(1),
      ],
    };
    const saved = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "save", base_version: "1", ...titlesAndTexts(edited) },
      at,
    );
    expect(saved.status).toBe(302);
    await correctHusten(user.id, letter.transcriptKey);

    const editor = await page(letter.editor, cookie);
    expect(editor.html).toContain("data-regenerate-form");
    expect(editor.html).toContain("Regenerate from corrected transcript");
    expect(editor.html).toMatch(/<option value="Beurteilung">Beurteilung<\/option>/);

    const started = await post(editorAction, letter.editor, cookie, { intent: "regenerate", scope: "__all__" }, at);
    expect(started.status).toBe(302);
    expect(started.headers.get("Location")).toBe(`${letter.editor}?regeneration=1`);
    expect((await letterStatusOf(letter.recordingId)).medical_letter_status).toBe("processing");

    // While it runs: the page says so, refreshes itself without JavaScript, and the letter is read-only.
    const waiting = await page(`${letter.editor}?regeneration=1`, cookie);
    expect(waiting.status).toBe(200);
    expect(waiting.html).toContain('data-regeneration="processing"');
    expect(waiting.html).toContain("The letter is being regenerated from the corrected transcript.");
    expect(waiting.html).toContain('<noscript><meta http-equiv="refresh" content="5"/></noscript>');
    expect(waiting.html).not.toContain('data-action="save"');
    expect(waiting.html).toMatch(/<button[^>]*disabled=""[^>]*data-action="regenerate"/);
    const again = await post(editorAction, letter.editor, cookie, { intent: "regenerate", scope: "__all__" }, at);
    expect(again.status).toBe(409);
    expect((await again.json()).error).toBe("The document is being created. Please wait until it is ready.");

    expect(await runTheJob(letter.recordingId)).toBe("completed");
    // The letter is exactly the doctor's: no version was added by the regeneration.
    const after = await contentOf(letter.key);
    expect(after.count).toBe(2);
    expect(after.current).toEqual(edited);
    expect((await letterStatusOf(letter.recordingId)).medical_letter_status).toBe("completed");

    // The page that waited leads on to the proposal.
    const done = await page(`${letter.editor}?regeneration=1`, cookie);
    expect(done.status).toBe(302);
    const proposalUrl = done.location!;
    expect(proposalUrl).toMatch(new RegExp(`^${letter.editor}\\?proposal=[0-9a-f-]{36}$`));
    const proposal = await page(proposalUrl, cookie);
    expect(proposal.html).toContain("Regenerated from the corrected transcript (whole letter)");
    for (const title of ["Subjektiv", "Objektiv", "Beurteilung", "Plan"]) {
      const section = diffSection(proposal.html, title)!;
      expect(section.change).toBe("changed");
      expect(section.inserted).toContain("Reizhusten");
    }
    expect(proposal.html).toContain('data-action="accept"');
    // The editor without the query shows the letter as it was, and a link to the proposal.
    const editorAfter = await page(letter.editor, cookie);
    expect(editorAfter.html).toContain("vom Arzt ergänzt.");
    expect(editorAfter.html).toContain('data-regeneration="ready"');
    expect(editorAfter.html).toContain(`href="${proposalUrl}"`);

    // Accepted: a new version with the regenerated text; the doctor's edit stays in the history.
    const proposalId = new URL(`http://x${proposalUrl}`).searchParams.get("proposal")!;
    const accepted = await post(editorAction, letter.editor, cookie, { intent: "accept", proposalId }, at);
    expect(accepted.status).toBe(302);
    const versions = await versionsOf(letter.key);
    expect(versions.map((v) => v.kind)).toEqual(["generated", "edited", "refined"]);
    expect(JSON.stringify(versions[2]!.content)).toContain("Reizhusten");
    expect(versions[1]!.content).toEqual(edited);
    expect((await page(letter.editor, cookie)).html).not.toContain('data-regeneration="ready"');

    // Audited by who, when and which letter; never the text.
    const audit = await auditActions(user.id);
    expect(audit).toEqual([
      { action: "letter.regenerate", outcome: "success", entity_id: letter.key },
      { action: "letter.regenerate", outcome: "failure", entity_id: letter.key }, // the second one, while busy
      { action: "letter.regenerate.done", outcome: "success", entity_id: letter.key },
    ]);
  });

  it("replaces only the chosen section in the proposal and keeps the doctor's edits in every other one", async () => {
    llm().responder = echoResponder;
    const { user, cookie } = await signedInUser({ email: "regen-section@praxis.example" });
    const letter = await seedLetter(user.id, { content: LETTER });
    const at = { "*": letter.path };
    const edited: { structured_output: Record<string, string>[] } = {
      structured_output: [
        { Subjektiv: "Vom Arzt geschrieben." },
        { Objektiv: "Lunge frei." },
        { Beurteilung: "Vom Arzt beurteilt." },
        { Plan: "Kontrolle in einer Woche." },
      ],
    };
    await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "save", base_version: "1", ...titlesAndTexts(edited) },
      at,
    );
    await correctHusten(user.id, letter.transcriptKey);
    const started = await post(editorAction, letter.editor, cookie, { intent: "regenerate", scope: "Objektiv" }, at);
    expect(started.status).toBe(302);
    const running = await page(letter.editor, cookie);
    expect(running.html).toContain("The section “Objektiv” is being regenerated from the corrected transcript.");
    expect(await runTheJob(letter.recordingId)).toBe("completed");
    expect((await contentOf(letter.key)).current).toEqual(edited);

    const proposalUrl = (await page(`${letter.editor}?regeneration=1`, cookie)).location!;
    const proposal = await page(proposalUrl, cookie);
    expect(proposal.html).toContain("Regenerated from the corrected transcript (section “Objektiv”)");
    expect(diffSection(proposal.html, "Objektiv")).toMatchObject({ change: "changed" });
    expect(diffSection(proposal.html, "Objektiv")!.inserted).toContain("Reizhusten");
    for (const title of ["Subjektiv", "Beurteilung", "Plan"])
      expect(diffSection(proposal.html, title)).toEqual({ change: "unchanged", inserted: "" });

    const proposalId = new URL(`http://x${proposalUrl}`).searchParams.get("proposal")!;
    await post(editorAction, letter.editor, cookie, { intent: "accept", proposalId }, at);
    const current = (await contentOf(letter.key)).current as { structured_output: Record<string, string>[] };
    expect(current.structured_output[0]).toEqual({ Subjektiv: "Vom Arzt geschrieben." });
    expect(current.structured_output[1]!.Objektiv).toContain("Reizhusten");
    expect(current.structured_output.slice(2)).toEqual(edited.structured_output.slice(2));
  });

  it("lets a letter changed while the regeneration ran keep its change: the proposal is stale and cannot be accepted", async () => {
    llm().responder = echoResponder;
    const { client, userId } = await signIn("anna-berger");
    const letter = await seedLetter(userId, { content: LETTER });
    const started = await regenerate(client, letter.path, { scope: "all" });
    expect(started.status).toBe(202);
    // A save over the JSON API while the job runs (the editor itself is read-only meanwhile).
    const doctors = {
      structured_output: [{ Subjektiv: "Inzwischen vom Arzt geändert." }, { Objektiv: "Lunge frei." }],
    };
    const saved = await withParams(
      letterAction,
      client,
      `/api/arztbrief/${letter.path}`,
      { "*": letter.path },
      {
        method: "PUT",
        json: { content: doctors, base_version: 1 },
      },
    );
    expect(saved.status).toBe(200);
    expect(await runTheJob(letter.recordingId)).toBe("completed");
    expect((await contentOf(letter.key)).current).toEqual(doctors);

    const status = await regenerationStatus(client, letter.path);
    expect(status.body).toMatchObject({ status: "completed", proposal_status: "open", stale: true });
    const { cookie } = await sessionOf(userId);
    const view = await page(`${letter.editor}?proposal=${status.body.proposal_id}`, cookie);
    expect(view.html).toContain("data-stale");
    expect(view.html).not.toContain('data-action="accept"');
    const forced = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "accept", proposalId: status.body.proposal_id },
      { "*": letter.path },
    );
    expect(forced.status).toBe(409);
    expect((await contentOf(letter.key)).current).toEqual(doctors);
    expect((await versionsOf(letter.key)).map((v) => v.kind)).toEqual(["generated", "edited"]);
  });

  it("keeps the letter's content and status when the model fails, and says why in the editor", async () => {
    const { user, cookie } = await signedInUser({ email: "regen-fail@praxis.example" });
    const letter = await seedLetter(user.id, { content: LETTER });
    await post(editorAction, letter.editor, cookie, { intent: "regenerate", scope: "__all__" }, { "*": letter.path });
    // The model refuses the request for good (a 4xx other than a rate limit is permanent).
    llm().replies.push(reply.error(400, { message: "bad request" }));
    expect(await runTheJob(letter.recordingId)).toBe("failed");
    expect(await versionsOf(letter.key)).toHaveLength(1);
    expect((await contentOf(letter.key)).current).toEqual(LETTER);
    expect((await letterStatusOf(letter.recordingId)).medical_letter_status).toBe("completed");
    const waited = await page(`${letter.editor}?regeneration=1`, cookie);
    expect(waited.status).toBe(200);
    expect(waited.html).toContain('data-regeneration="failed"');
    expect(waited.html).toContain(
      "The regeneration from the corrected transcript failed: The letter could not be regenerated from the transcript. Your letter is unchanged.",
    );
    // Not busy any more: the doctor can edit or try again.
    expect(waited.html).toContain('data-action="save"');
    expect(waited.html).not.toContain("data-letter-busy");
    const audit = await auditActions(user.id);
    expect(audit.map((a) => [a.action, a.outcome])).toEqual([
      ["letter.regenerate", "success"],
      ["letter.regenerate.done", "failure"],
    ]);
  });
});

describe("when a regeneration cannot start", () => {
  it("gives a translated reason for a letter without template, without transcript, or busy, and starts nothing", async () => {
    const { user, cookie } = await signedInUser({ email: "regen-refused@praxis.example" });
    const noTemplate = await seedLetter(user.id, { content: LETTER, templateId: null });
    const noTranscript = await seedLetter(user.id, { content: LETTER });
    await getDb()
      .updateTable("recordings")
      .set({ transcript_key: null })
      .where("id", "=", noTranscript.recordingId)
      .execute();
    const busy = await seedLetter(user.id, { content: LETTER, status: "processing" });
    const sectionGone = await seedLetter(user.id, { content: LETTER });
    const cases: Array<[typeof noTemplate, string, number, string]> = [
      [noTemplate, "__all__", 400, "Template information missing for redo"],
      [noTranscript, "__all__", 400, "Source file not found"],
      [busy, "__all__", 409, "The document is being created. Please wait until it is ready."],
      [sectionGone, "Anamnese", 400, "Section not found"],
    ];
    for (const [letter, scope, status, message] of cases) {
      const answer = await post(
        editorAction,
        letter.editor,
        cookie,
        { intent: "regenerate", scope },
        {
          "*": letter.path,
        },
      );
      expect(answer.status).toBe(status);
      expect((await answer.json()).error).toBe(message);
      expect(await letterJobOf(letter.recordingId)).toBeUndefined();
      // The form shows it where it was asked, with the choice kept.
      const shown = await page(letter.editor, cookie, { intent: "regenerate", scope });
      expect(shown.html).toMatch(new RegExp(`data-regenerate[^-][\\s\\S]*role="alert"[^>]*>${message}<`));
    }
    // In German, the default.
    const german = await callRoute(
      editorAction,
      request(noTemplate.editor, {
        cookie,
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
        body: new URLSearchParams({ intent: "regenerate", scope: "__all__" }).toString(),
      }),
      { "*": noTemplate.path },
    );
    expect((await german.json()).error).toBe("Vorlageninformation für die Neuerstellung fehlt");
    expect((await auditActions(user.id)).every((a) => a.outcome === "failure")).toBe(true);
  });

  it("answers 404 for another user's letter, on the editor's form and the JSON call, and starts nothing", async () => {
    const owner = await signedInUser({ email: "regen-owner@praxis.example" });
    const letter = await seedLetter(owner.user.id, { content: LETTER });
    const other = await signIn("jonas-keller");
    const { cookie } = await sessionOf(other.userId);
    const form = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "regenerate", scope: "__all__" },
      {
        "*": letter.path,
      },
    );
    expect(form.status).toBe(404);
    const started = await regenerate(other.client, letter.path, { scope: "all" });
    expect(started.status).toBe(404);
    const status = await regenerationStatus(other.client, letter.path);
    expect(status.status).toBe(404);
    expect(await letterJobOf(letter.recordingId)).toBeUndefined();
    expect((await letterStatusOf(letter.recordingId)).medical_letter_status).toBe("completed");
  });
});

describe("POST and GET /api/arztbrief-regenerate/{key}", () => {
  it("starts a section's regeneration with 202, tells how to follow it, and names the proposal once it is there", async () => {
    llm().responder = echoResponder;
    const { client, userId } = await signIn("sara-yilmaz");
    const letter = await seedLetter(userId, { content: LETTER });
    await correctHusten(userId, letter.transcriptKey);
    expect((await regenerationStatus(client, letter.path)).body).toEqual({
      key: letter.key,
      status: "none",
      status_url: `/api/arztbrief-regenerate/${letter.path}`,
    });

    const started = await regenerate(client, letter.path, { scope: "section", section: "Beurteilung" });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      key: letter.key,
      status: "processing",
      scope: "section",
      section: "Beurteilung",
      base_version: 1,
      status_url: `/api/arztbrief-regenerate/${letter.path}`,
    });
    expect(started.body.job_name).toMatch(/^letter-/);
    const running = await regenerationStatus(client, letter.path);
    expect(running.body).toMatchObject({ status: "processing", job_name: started.body.job_name });
    const busy = await regenerate(client, letter.path, { scope: "all" });
    expect(busy.status).toBe(409);
    expect(busy.body.detail).toBe("The document is being created. Please wait until it is ready.");

    expect(await runTheJob(letter.recordingId)).toBe("completed");
    const done = await regenerationStatus(client, letter.path);
    expect(done.body).toMatchObject({ status: "completed", proposal_status: "open", stale: false, base_version: 1 });
    const proposal = await getDb()
      .selectFrom("letter_proposals")
      .where("id", "=", done.body.proposal_id)
      .select(["query", "scope", "section_title", "base_version", "content"])
      .executeTakeFirstOrThrow();
    expect(proposal).toMatchObject({
      query: "Regenerated from the corrected transcript (section “Beurteilung”)",
      scope: "section",
      section_title: "Beurteilung",
      base_version: 1,
    });
    const sections = (proposal.content as { structured_output: Record<string, string>[] }).structured_output;
    expect(sections[2]!.Beurteilung).toContain("Reizhusten");
    expect([sections[0], sections[1], sections[3]]).toEqual([
      { Subjektiv: "Husten seit drei Tagen." },
      { Objektiv: "Lunge frei." },
      { Plan: "Keine Informationen gefunden" },
    ]);
    expect(await versionsOf(letter.key)).toHaveLength(1);
  });

  it("refuses a body of the wrong shape or type with a readable 400, before anything starts", async () => {
    const { client, userId } = await signIn("anna-berger");
    const letter = await seedLetter(userId, { content: LETTER });
    const refusals: Array<[unknown, string]> = [
      [{}, "Please give the scope: “scope” is “all” (the whole letter) or “section” (one section)."],
      [{ scope: 1 }, "Please give the scope: “scope” is “all” (the whole letter) or “section” (one section)."],
      [{ scope: "alles" }, "Please give the scope: “scope” is “all” (the whole letter) or “section” (one section)."],
      [{ scope: "section" }, "Please name the section to regenerate (“section”)."],
      [{ scope: "section", section: 3 }, "Please name the section to regenerate (“section”)."],
      [{ scope: "section", section: "Anamnese" }, "Section not found"],
    ];
    for (const [json, detail] of refusals) {
      const answer = await regenerate(client, letter.path, json);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ detail });
    }
    const wrongType = await regenerate(client, letter.path, { scope: "all", section: ["Plan"] });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.detail).toMatch(/section/);
    expect(await letterJobOf(letter.recordingId)).toBeUndefined();
  });
});

function regenerate(client: ApiClient, path: string, json: unknown) {
  return withParams(
    regenerateAction,
    client,
    `/api/arztbrief-regenerate/${path}`,
    { "*": path },
    {
      method: "POST",
      json,
    },
  );
}

function regenerationStatus(client: ApiClient, path: string) {
  return withParams(regenerateLoader, client, `/api/arztbrief-regenerate/${path}`, { "*": path });
}

/** A browser session of the user an API client signed in as. */
async function sessionOf(userId: string) {
  const setCookie = await startSession({ userId, idToken: null });
  return { cookie: setCookie.split(";")[0]! };
}
