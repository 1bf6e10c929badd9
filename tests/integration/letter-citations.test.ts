import { describe, expect, it } from "vitest";
import { action as editorAction } from "~/routes/_app.arztbriefe.$/route";
import { loader as evidenceLoader } from "~/routes/api.arztbrief-evidence.$";
import { getDb } from "~/models/db.server";
import type { StoredLetterContent } from "~/models/schema";
import { findDataBlocks } from "~/services/letters/data-blocks";
import { runLetterJob } from "~/services/letters/job.server";
import { letterJobOf } from "../support/letter-fixtures";
import { CHECKED_CONSULTATION, page, post, seedLetter, titlesAndTexts } from "../support/letter-screens";
import { setupLetterModel } from "../support/letters-api";
import { reply, type FakeChatRequest } from "../support/fake-openai-chat";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The model's own citations (issue 24): an engine that can name sources is asked for them — the transcript's lines
// travel with their ids, the answer is statements with sources — and the checker verifies every one before the
// editor shows it. The language model is the real OpenAI-compatible adapter talking HTTP to a protocol-faithful fake
// server (tests/support/letters-api.ts) answering with correct, wrong, missing and made-up citations; the letter is
// written by a real letter job (a regeneration from the transcript, accepted by the doctor).
setupTestApp();
const llm = setupLetterModel();

const PLACEHOLDER: StoredLetterContent = {
  structured_output: [
    { Subjektiv: "Vorläufig." },
    { Objektiv: "Vorläufig." },
    { Beurteilung: "Vorläufig." },
    { Plan: "Vorläufig." },
  ],
};

/** What the model writes, per section of the soap template, with the sources it names. */
const ANSWER = {
  // Correct: the patient's answer about her medication.
  s1: [{ text: "Ramipril 5 mg morgens.", sources: ["t1p0"] }],
  // Wrong: the question about medication says nothing of fever (the answer two lines later does).
  s2: [{ text: "Kein Fieber, kein Husten.", sources: ["t0p0"] }],
  // Missing: no source named, although the transcript has one.
  s3: [{ text: "Penicillinallergie mit Ausschlag.", sources: [] }],
  // Made up: the transcript has no line t99p0.
  s4: [{ text: "Kein Husten.", sources: ["[t99p0]"] }],
};

const requests: FakeChatRequest[] = [];
function citingModel(request: FakeChatRequest) {
  requests.push(request);
  return reply.json({ document_type: "patient_conversation", sections: ANSWER });
}

/** A letter the model wrote with its citations: regenerated from the transcript and accepted by the doctor. */
async function citedLetter(email: string) {
  llm().responder = citingModel;
  requests.length = 0;
  const { user, cookie } = await signedInUser({ email });
  const letter = await seedLetter(user.id, { content: PLACEHOLDER, lines: CHECKED_CONSULTATION });
  const at = { "*": letter.path };
  const started = await post(editorAction, letter.editor, cookie, { intent: "regenerate", scope: "__all__" }, at);
  expect(started.status).toBe(302);
  const job = await letterJobOf(letter.recordingId);
  expect(await runLetterJob(job!.id)).toBe("completed");
  const proposalUrl = (await page(`${letter.editor}?regeneration=1`, cookie)).location!;
  const proposalId = new URL(`http://x${proposalUrl}`).searchParams.get("proposal")!;
  expect((await post(editorAction, letter.editor, cookie, { intent: "accept", proposalId }, at)).status).toBe(302);
  return { user, cookie, letter, at };
}

/** The check's item of the sentence with this text. */
function sentence(html: string, text: string) {
  const item = html
    .split(/(?=<li [^>]*data-sentence=)/)
    .slice(1)
    .map((chunk) => chunk.split("</ol></section>")[0]!)
    .find((chunk) => chunk.includes(`>${text}<`));
  expect(item, `sentence “${text}” on the page`).toBeDefined();
  return item!;
}

async function evidenceJson(path: string, cookie: string) {
  const response = await callRoute(evidenceLoader, request(`/api/arztbrief-evidence/${path}`, { cookie }), {
    "*": path,
  });
  expect(response.status).toBe(200);
  return response.json();
}

describe("the model's citations, verified", () => {
  it("asks an engine that can cite for statements with the ids of the transcript's lines", async () => {
    await citedLetter("cite-prompt@praxis.example");
    expect(requests).toHaveLength(1);
    const body = requests[0]!.body;
    const schema = body.response_format.json_schema.schema;
    expect(schema.properties.sections.properties.s1.type).toBe("array");
    expect(schema.properties.sections.properties.s1.items.required).toEqual(["text", "sources"]);
    const text = (body.messages as Array<{ content: string }>).map((m) => m.content).join("\n");
    const transcript = findDataBlocks(text)
      .find((b) => b.kind === "TRANSCRIPT")!
      .body.split("\n");
    expect(transcript[1]).toBe("[t1p0] Sprecher 2: Ramipril 5 Milligramm morgens, sonst nichts.");
    expect(body.messages[0].content).toContain("Cite only lines that really say what the statement says");
  });

  it("marks a citation that holds, flags a wrong and a made-up one, and leaves a missing one to the checker", async () => {
    const { cookie, letter } = await citedLetter("cite-check@praxis.example");
    const { html } = await page(`${letter.editor}?check=1`, cookie);

    const correct = sentence(html, "Ramipril 5 mg morgens.");
    expect(correct).toContain('data-status="supported"');
    expect(correct).toMatch(/data-source="t1p0"[^]*?data-cited/);
    expect(correct).toContain("named by the model · checked");
    expect(correct).not.toContain("data-flag");

    // Supported by the checker (the answer t3p0), but the model's source does not say it: flagged, and shown.
    const wrong = sentence(html, "Kein Fieber, kein Husten.");
    expect(wrong).toContain('data-status="supported"');
    expect(wrong).toContain('data-flag="citation"');
    expect(wrong).toContain("The model&#x27;s citation does not bear it out");
    expect(wrong).toContain('data-cited-not-holding="t0p0"');
    expect(wrong).toContain('data-source="t3p0"');
    expect(wrong).not.toMatch(/data-source="t3p0"[^>]*>[^]*?data-cited(?!-)/);

    // No source named: the checker's link stands alone, nothing is flagged.
    const missing = sentence(html, "Penicillinallergie mit Ausschlag.");
    expect(missing).toContain('data-status="supported"');
    expect(missing).toContain('data-source="t5p0"');
    expect(missing).not.toContain("data-flag");
    expect(missing).not.toContain("data-cited");

    const madeUp = sentence(html, "Kein Husten.");
    expect(madeUp).toContain('data-flag="citation"');
    expect(madeUp).toContain('data-cited-unknown="t99p0"');
    expect(madeUp).toContain("“t99p0” – the transcript has no such passage.");

    // The header counts the two citations that do not hold, apart from missing evidence and differing details.
    const editor = await page(letter.editor, cookie);
    expect(editor.html).toContain("2 of the model&#x27;s citations not borne out");
    expect(editor.html).not.toContain("without evidence");
  });

  it("answers the same over the JSON API", async () => {
    const { cookie, letter } = await citedLetter("cite-api@praxis.example");
    const body = await evidenceJson(letter.path, cookie);
    expect(body.counts).toMatchObject({ unsupported: 0, citations: 2 });
    const sentences = body.sections.flatMap((s: { sentences: unknown[] }) => s.sentences);
    const byText = (text: string) => sentences.find((s: { text: string }) => s.text === text);
    expect(byText("Ramipril 5 mg morgens.").citation).toEqual({ named: 1, holding: 1, not_holding: [], unknown: [] });
    expect(byText("Ramipril 5 mg morgens.").sources[0]).toMatchObject({ segment_id: "t1p0", cited: true });
    expect(byText("Kein Fieber, kein Husten.").citation).toMatchObject({
      named: 1,
      holding: 0,
      not_holding: [{ segment_id: "t0p0", text: "Welche Medikamente nehmen Sie im Moment?" }],
    });
    expect(byText("Penicillinallergie mit Ausschlag.").citation).toBeNull();
    expect(byText("Kein Husten.").citation).toMatchObject({ holding: 0, unknown: ["t99p0"] });
  });

  it("lets the doctor confirm a wrong citation (audited without text) and drops the citation of a rewritten sentence", async () => {
    const { user, cookie, letter, at } = await citedLetter("cite-confirm@praxis.example");
    const before = await page(`${letter.editor}?check=1`, cookie);
    const hash = /data-sentence="([0-9a-f]{32})"/.exec(sentence(before.html, "Kein Fieber, kein Husten."))![1]!;
    const confirmed = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "confirmFlag", sentence: hash, flag: "citation" },
      at,
    );
    expect(confirmed.status).toBe(302);
    const after = await page(`${letter.editor}?check=1`, cookie);
    expect(sentence(after.html, "Kein Fieber, kein Husten.")).toContain("data-confirmed");
    expect((await page(letter.editor, cookie)).html).toContain("1 of the model&#x27;s citations not borne out");
    const audit = await getDb()
      .selectFrom("audit_events")
      .where("user_id", "=", user.id)
      .where("action", "=", "letter.confirm.citation")
      .select(["entity_id", "outcome"])
      .execute();
    expect(audit).toEqual([{ entity_id: letter.key, outcome: "success" }]);

    // The doctor rewrites the made-up-source sentence: it is the doctor's now, with no citation and no flag.
    const saved = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "save",
        base_version: "2", // generated, then the accepted regeneration
        ...titlesAndTexts({
          structured_output: [
            { Subjektiv: "Ramipril 5 mg morgens." },
            { Objektiv: "Kein Fieber, kein Husten." },
            { Beurteilung: "Penicillinallergie mit Ausschlag." },
            { Plan: "Husten verneint." },
          ],
        }),
      },
      at,
    );
    expect(saved.status).toBe(302);
    const rewritten = await evidenceJson(letter.path, cookie);
    const plan = rewritten.sections.find((s: { title: string }) => s.title === "Plan").sentences[0];
    expect(plan).toMatchObject({ text: "Husten verneint.", status: "doctor", flags: [], citation: null });
    // The other sentences keep their citation through the doctor's edit elsewhere.
    expect(rewritten.counts.citations).toBe(0);
    const ramipril = rewritten.sections[0].sentences[0];
    expect(ramipril.citation).toMatchObject({ holding: 1 });
  });
});
